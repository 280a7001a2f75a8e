// SPDX-License-Identifier: Apache-2.0
// Linux system calls that Swift's Glibc module does not import (epoll, eventfd, timerfd,
// accept4, sendfile) or imports awkwardly (the epoll_event union). Every function is a thin
// pass-through: errno is left for the caller to read.
#pragma once

#include <spawn.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// epoll event bits, re-exported as plain constants because the glibc header defines them
// as enum members with macro aliases that Swift imports inconsistently.
extern const uint32_t thumbd_epoll_in;
extern const uint32_t thumbd_epoll_out;
extern const uint32_t thumbd_epoll_err;
extern const uint32_t thumbd_epoll_hup;
extern const uint32_t thumbd_epoll_rdhup;
extern const uint32_t thumbd_epoll_et;
extern const uint32_t thumbd_epoll_oneshot;
extern const int thumbd_epoll_ctl_add;
extern const int thumbd_epoll_ctl_mod;
extern const int thumbd_epoll_ctl_del;

/// One ready event: the registration's 64-bit token and the event bits.
/// (epoll_event is packed on x86_64; this struct is not, so Swift can read it safely.)
typedef struct {
    uint64_t token;
    uint32_t events;
} ThumbdEpollEvent;

/// epoll_create1(EPOLL_CLOEXEC). Returns the fd or -1 with errno set.
int thumbd_epoll_create(void);

/// epoll_ctl with a 64-bit token stored in epoll_data.u64.
int thumbd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);

/// epoll_wait into a caller-owned array of `capacity` ThumbdEpollEvent (borrowed).
/// Returns the number of events, or -1 with errno set.
int thumbd_epoll_wait(int epfd, ThumbdEpollEvent *events, int capacity, int timeout_ms);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int thumbd_eventfd_create(void);

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC).
int thumbd_timerfd_create(void);

/// Arms a one-shot timerfd to fire after `nanoseconds` (0 disarms).
int thumbd_timerfd_arm(int fd, int64_t nanoseconds);

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int thumbd_accept4(int fd);

/// sendfile(out_fd, in_fd, &offset, count); advances *offset.
ssize_t thumbd_sendfile(int out_fd, int in_fd, int64_t *offset, size_t count);

/// The CPUs this process may run on: CPU_COUNT of sched_getaffinity's mask (what `taskset`, a
/// container's cpuset or `docker --cpuset-cpus` allow), or sysconf(_SC_NPROCESSORS_ONLN) when the
/// mask cannot be read. At least 1. (CPU_COUNT is a macro, which Swift cannot call.)
int thumbd_available_cpus(void);

/// The calling thread's kernel thread id (gettid), for thread names in logs and asserts.
int thumbd_gettid(void);

/// Names the calling thread (pthread_setname_np; at most 15 characters are kept).
void thumbd_set_thread_name(const char *name);

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start, so a child another thread spawns in between
/// never inherits them (pipe then fcntl would leave that window). Swift's Glibc module does not declare pipe2
/// (it needs _GNU_SOURCE). Returns 0, or -1 with errno.
int thumbd_pipe_cloexec(int fds[2]);

/// posix_spawn_file_actions_addclosefrom_np(actions, lowest) (glibc 2.34; _GNU_SOURCE): the child closes every
/// descriptor from `lowest` up before it runs. Returns 0 or an error number.
int thumbd_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// Sets `attributes` so the spawned child starts with no signal blocked and every signal at its default action
/// (POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF): nothing the parent ignores or blocks reaches the child.
void thumbd_spawn_default_signals(posix_spawnattr_t *attributes);

#ifdef __cplusplus
}
#endif
