// SPDX-License-Identifier: Apache-2.0

// Everything, from parsing the arguments to running the service, lives in ThumbdApp so that it can be tested;
// this file only starts it.
import ThumbdApp

ThumbdCommand.main()
