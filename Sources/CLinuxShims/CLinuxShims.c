// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "CLinuxShims.h"

#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

const uint32_t thumbd_epoll_in = EPOLLIN;
const uint32_t thumbd_epoll_out = EPOLLOUT;
const uint32_t thumbd_epoll_err = EPOLLERR;
const uint32_t thumbd_epoll_hup = EPOLLHUP;
const uint32_t thumbd_epoll_rdhup = EPOLLRDHUP;
const uint32_t thumbd_epoll_et = EPOLLET;
const uint32_t thumbd_epoll_oneshot = EPOLLONESHOT;
const int thumbd_epoll_ctl_add = EPOLL_CTL_ADD;
const int thumbd_epoll_ctl_mod = EPOLL_CTL_MOD;
const int thumbd_epoll_ctl_del = EPOLL_CTL_DEL;

int thumbd_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int thumbd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &ev);
}

int thumbd_epoll_wait(int epfd, ThumbdEpollEvent *events, int capacity, int timeout_ms) {
    // Kernel events land in a packed array on the stack, then are copied to the caller's
    // unpacked structs. 256 bounds the stack use; callers ask for at most that many.
    struct epoll_event raw[256];
    if (capacity > 256) capacity = 256;
    int n = epoll_wait(epfd, raw, capacity, timeout_ms);
    for (int i = 0; i < n; i++) {
        events[i].token = raw[i].data.u64;
        events[i].events = raw[i].events;
    }
    return n;
}

int thumbd_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int thumbd_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int thumbd_timerfd_arm(int fd, int64_t nanoseconds) {
    struct itimerspec spec = {0};
    if (nanoseconds > 0) {
        spec.it_value.tv_sec = nanoseconds / 1000000000;
        spec.it_value.tv_nsec = nanoseconds % 1000000000;
    }
    return timerfd_settime(fd, 0, &spec, NULL);
}

int thumbd_accept4(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

ssize_t thumbd_sendfile(int out_fd, int in_fd, int64_t *offset, size_t count) {
    off_t off = (off_t)*offset;
    ssize_t n = sendfile(out_fd, in_fd, &off, count);
    *offset = (int64_t)off;
    return n;
}

int thumbd_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

int thumbd_gettid(void) { return (int)syscall(SYS_gettid); }

void thumbd_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

int thumbd_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int thumbd_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

void thumbd_spawn_default_signals(posix_spawnattr_t *attributes) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(attributes, &none);
    posix_spawnattr_setsigdefault(attributes, &all);
    posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}
