// Runs a program and sends it SIGINT (Ctrl-C) right after it writes a given
// text to stderr, the way a user stops a training run. The program's stderr
// comes through a pipe shrunk to one page, so it cannot run far past the
// text before the signal arrives: it blocks writing its next lines until this
// process reads them. No timing is involved.
//   interrupt_after TEXT PROGRAM [ARGS...]
// Exit code: the program's (128 + signal if a signal ended it); 3 if the
// program ended without writing TEXT; 4 if it could not be started.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: interrupt_after TEXT PROGRAM [ARGS...]\n");
    return 2;
  }
  const std::string text = argv[1];
  int fds[2];
  if (pipe(fds) != 0) return 4;
#ifdef F_SETPIPE_SZ
  fcntl(fds[0], F_SETPIPE_SZ, 4096);
#endif
  const pid_t child = fork();
  if (child < 0) return 4;
  if (child == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(argv[2], argv + 2);
    std::perror(argv[2]);
    _exit(127);
  }
  close(fds[1]);
  std::string pending;
  bool sent = false;
  char buffer[256];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    fwrite(buffer, 1, static_cast<size_t>(n), stderr);
    if (sent) continue;
    pending.append(buffer, static_cast<size_t>(n));
    if (pending.find(text) != std::string::npos) {
      kill(child, SIGINT);
      sent = true;
      std::fprintf(stderr, "[interrupt_after: sent SIGINT after '%s']\n", text.c_str());
    } else if (pending.size() > 4 * text.size() + 4096) {
      pending.erase(0, pending.size() - text.size());
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!sent) {
    std::fprintf(stderr, "interrupt_after: the program ended without writing '%s'\n", text.c_str());
    return 3;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
