// SPDX-License-Identifier: Apache-2.0

/// Carries a non-`Sendable` value through `@Sendable` closures, checking that it is only used on
/// its loop (NIO's `NIOLoopBound`).
///
/// ```swift
/// let bound = LoopBound(connection, loop: loop)     // on `loop`
/// pool.submit { let r = work(); loop.execute { bound.value.finish(r) } }
/// ```
package struct LoopBound<Value>: @unchecked Sendable {
    // Sendable: `_value` is read and written only after `loop.preconditionInLoop()`.

    /// The loop that owns the value.
    package let loop: EventLoop
    private var _value: Value

    /// Wraps `value`; must be called on `loop`.
    package init(_ value: Value, loop: EventLoop) {
        loop.preconditionInLoop()
        self.loop = loop
        _value = value
    }

    /// The value; get and set only on ``loop``.
    package var value: Value {
        get {
            loop.preconditionInLoop()
            return _value
        }
        set {
            loop.preconditionInLoop()
            _value = newValue
        }
    }
}

/// A shared, mutable box whose value may be touched only on its loop (NIO's `NIOLoopBoundBox`).
package final class LoopBoundBox<Value>: @unchecked Sendable {
    // Sendable: `_value` is read and written only after `loop.preconditionInLoop()`.

    /// The loop that owns the value.
    package let loop: EventLoop
    private var _value: Value

    /// Wraps `value`; must be called on `loop`.
    package init(_ value: Value, loop: EventLoop) {
        loop.preconditionInLoop()
        self.loop = loop
        _value = value
    }

    /// The value; get and set only on ``loop``.
    package var value: Value {
        get {
            loop.preconditionInLoop()
            return _value
        }
        set {
            loop.preconditionInLoop()
            _value = newValue
        }
    }
}
