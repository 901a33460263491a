#ifndef TELWATCH_CLOOP_SHIM_H
#define TELWATCH_CLOOP_SHIM_H

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Variadic syscall() and a few kernel interfaces are not callable from Swift directly. */
static inline int cloop_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

static inline int cloop_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static inline int cloop_signalfd(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

static inline int cloop_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/* glibc (2.34+) declares this only under _GNU_SOURCE, which Swift's Glibc module is built without. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

#endif
