//===- strata-launch.cpp - start N ranks of a program, as torchrun
//---------===//
//
//   strata-launch --nproc-per-node N [--master-addr A] [--master-port P]
//                 [--grace-seconds S] PROGRAM ARGS...
//
// Starts N processes of PROGRAM with torchrun's environment (RANK,
// LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
// --master-port 0, the default, picks a free port), forwards each one's
// stdout and stderr line by line with a "[rank K] " prefix, and, when a rank
// exits with a failure, sends SIGTERM to the others (SIGKILL after the
// grace period, 5 s) and exits with that rank's status (128 + signal for a
// signal). Exit status 0 when every rank succeeded.
//
//===----------------------------------------------------------------------===//
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string &why = "") {
  if (!why.empty())
    std::fprintf(stderr, "strata-launch: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: strata-launch [--nproc-per-node N (default 1)] "
               "[--master-addr A] [--master-port P] [--grace-seconds S] "
               "PROGRAM [ARGS...]\n(--name=value works too)\n");
  std::exit(2);
}

/// `text` as a whole number in [lo, hi], else the usage with why.
long long number(const std::string &option, const std::string &text,
                 long long lo, long long hi) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < lo || v > hi)
    usage(option + " takes a whole number in [" + std::to_string(lo) + ", " +
          std::to_string(hi) + "], but got \"" + text + "\"");
  return v;
}

/// A port the kernel reports free now (bind to port 0).
int freePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (s < 0 || bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
    std::perror("strata-launch: finding a free port");
    std::exit(1);
  }
  close(s);
  return ntohs(a.sin_port);
}

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Stream {
  int fd = -1;
  int rank = 0;
  FILE *sink = nullptr;
  std::string pending; // a line not yet ended
};

/// One line of `s`'s output with its rank's prefix (bytes as they are,
/// NULs included).
void line(Stream &s, const char *data, size_t n) {
  std::fprintf(s.sink, "[rank %d] ", s.rank);
  std::fwrite(data, 1, n, s.sink);
  std::fputc('\n', s.sink);
}

void emit(Stream &s, const char *data, size_t n) {
  s.pending.append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos;
       start = nl + 1)
    line(s, s.pending.data() + start, nl - start);
  s.pending.erase(0, start);
  std::fflush(s.sink);
}

void flushRest(Stream &s) {
  if (!s.pending.empty()) {
    line(s, s.pending.data(), s.pending.size());
    s.pending.clear();
    std::fflush(s.sink);
  }
}

int statusOf(int wstatus) {
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return 1;
}

volatile sig_atomic_t gSignal = 0;
void onSignal(int sig) { gSignal = sig; }

} // namespace

int main(int argc, char **argv) {
  int nproc = 1, port = 0;
  double grace = 5;
  std::string addr = "127.0.0.1";
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    std::optional<std::string> inline_;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != a.npos) {
      inline_ = a.substr(eq + 1); // torchrun's --name=value
      a = a.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (inline_)
        return *inline_;
      if (i + 1 >= argc)
        usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--nproc-per-node" || a == "--nproc_per_node")
      nproc = static_cast<int>(number(a, value(), 1, 4096));
    else if (a == "--master-port" || a == "--master_port")
      port = static_cast<int>(number(a, value(), 0, 65535));
    else if (a == "--master-addr" || a == "--master_addr")
      addr = value();
    else if (a == "--grace-seconds")
      grace = static_cast<double>(number(a, value(), 0, 86400));
    else if (a == "--help" || a == "-h")
      usage();
    else if (a.rfind("--", 0) == 0)
      usage("unknown option " + a);
    else
      break;
  }
  if (i >= argc)
    usage("no program to run");
  if (port == 0)
    port = freePort();

  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGPIPE, SIG_IGN);

  std::vector<pid_t> pids(nproc, -1);
  std::vector<Stream> streams;
  for (int r = 0; r < nproc; ++r) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) {
      std::perror("strata-launch: pipe");
      return 1;
    }
    // SIGINT/SIGTERM stay blocked across the fork: a rank that the
    // launcher ends before it has exec'd must die of them, not run the
    // launcher's handler (which only notes them) and live on until SIGKILL.
    sigset_t ending, previous;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigprocmask(SIG_BLOCK, &ending, &previous);
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("strata-launch: fork");
      return 1;
    }
    if (pid == 0) {
      // A process group of its own: a rank's children end with it.
      setpgid(0, 0);
      // The rank's own dispositions (ignored SIGPIPE would outlive exec),
      // then the signals sent meanwhile are delivered, by default deadly.
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      std::signal(SIGPIPE, SIG_DFL);
      // Ends with the launcher, even one killed by SIGKILL.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher)
        _exit(128 + SIGKILL);
      sigprocmask(SIG_SETMASK, &previous, nullptr);
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(out[1]);
      close(err[0]);
      close(err[1]);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("GROUP_RANK", "0", 1);
      setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("MASTER_ADDR", addr.c_str(), 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      execvp(argv[i], argv + i);
      std::fprintf(stderr, "strata-launch: cannot run %s: %s\n", argv[i],
                   std::strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    pids[r] = pid;
    close(out[1]);
    close(err[1]);
    streams.push_back({out[0], r, stdout, {}});
    streams.push_back({err[0], r, stderr, {}});
  }

  int failedRank = -1, failedStatus = 0, running = nproc;
  double killAt = 0;
  bool termSent = false, killSent = false;
  auto terminateAll = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0)
        kill(-p, sig);
  };
  while (running > 0 || [&] {
    for (const Stream &s : streams)
      if (s.fd >= 0)
        return true;
    return false;
  }()) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t k = 0; k < streams.size(); ++k)
      if (streams[k].fd >= 0) {
        fds.push_back({streams[k].fd, POLLIN, 0});
        which.push_back(k);
      }
    int ready = fds.empty() ? 0 : poll(fds.data(), fds.size(), 100);
    if (fds.empty())
      usleep(100000);
    for (size_t k = 0; ready > 0 && k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      Stream &s = streams[which[k]];
      char buf[65536];
      ssize_t n = read(s.fd, buf, sizeof buf);
      if (n > 0) {
        emit(s, buf, static_cast<size_t>(n));
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        flushRest(s);
        close(s.fd);
        s.fd = -1;
      }
    }
    int wstatus;
    pid_t p;
    while ((p = waitpid(-1, &wstatus, WNOHANG)) > 0) {
      for (int r = 0; r < nproc; ++r) {
        if (pids[r] != p)
          continue;
        pids[r] = -1;
        --running;
        int st = statusOf(wstatus);
        if (st != 0 && failedRank < 0 && !termSent) {
          failedRank = r;
          failedStatus = st;
          std::fprintf(stderr,
                       "strata-launch: rank %d exited with status %d; "
                       "ending the other ranks\n",
                       r, st);
        }
      }
    }
    if (gSignal && !termSent) {
      failedStatus = 128 + gSignal;
      failedRank = failedRank < 0 ? nproc : failedRank;
    }
    if (failedRank >= 0 && !termSent && running > 0) {
      terminateAll(SIGTERM);
      termSent = true;
      killAt = now() + grace;
    }
    if (termSent && !killSent && running > 0 && now() >= killAt) {
      terminateAll(SIGKILL);
      killSent = true;
    }
    // Output pipes a rank's own children keep open must not hold us after
    // every rank has ended and been killed.
    if (running == 0 && killSent)
      break;
  }
  return failedRank >= 0 ? failedStatus : 0;
}
