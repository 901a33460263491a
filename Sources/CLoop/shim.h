#ifndef TELWATCH_CLOOP_SHIM_H
#define TELWATCH_CLOOP_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
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

/* Starts `path` (absolute or relative to the working directory, never looked up) with `argv` and
   `envp`, its signal mask empty and every disposition at its default, optionally as the leader of
   its own process group, with stdin/stdout/stderr from `fds` (>= 0: that descriptor; -1: inherited;
   -2: /dev/null) and every other descriptor closed at exec. Before the exec the kernel is told to
   send `death_signal` when this process dies, and the child checks that its parent is still the
   one that forked it: posix_spawn + setpriv left a window in which a parent killed just after the
   spawn orphaned the child for good. Returns the pid, or -errno (the exec's own failure included). */
static inline pid_t cloop_spawn_guarded(const char *path, char *const argv[], char *const envp[],
                                        const int fds[3], int new_group, int death_signal) {
    pid_t parent = getpid();
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(report[0]);
        close(report[1]);
        return -error;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls from here to the exec. */
        int error = 0;
        if (prctl(PR_SET_PDEATHSIG, death_signal) != 0) error = errno;
        if (!error && getppid() != parent) _exit(127);
        if (!error && new_group && setpgid(0, 0) != 0) error = errno;
        struct sigaction standard;
        memset(&standard, 0, sizeof standard);
        standard.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; number++) sigaction(number, &standard, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int target = 0; target < 3 && !error; target++) {
            int fd = fds[target];
            if (fd == -2) {
                fd = open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
                if (fd < 0) { error = errno; break; }
                if (fd != target) { dup2(fd, target); close(fd); }
            } else if (fd >= 0 && fd != target && dup2(fd, target) < 0) {
                error = errno;
            }
        }
        if (!error && syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
            for (int fd = 3; fd < 4096; fd++) {
                if (fd != report[1]) fcntl(fd, F_SETFD, FD_CLOEXEC);
            }
        }
        if (!error) {
            execve(path, argv, envp);
            error = errno;
        }
        while (write(report[1], &error, sizeof error) < 0 && errno == EINTR) {}
        _exit(127);
    }
    close(report[1]);
    int error = 0;
    ssize_t got;
    do { got = read(report[0], &error, sizeof error); } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof error) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        return -error;
    }
    return pid;
}

#endif
