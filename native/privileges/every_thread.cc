#include "privileges/every_thread.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "privileges/thread_credentials.h"

namespace ovnpsample {

namespace {

constexpr int kMaxThreads = 4096;
// A thread that takes longer than this to run a signal handler is not going to.
constexpr auto kThreadDeadline = std::chrono::seconds(5);

// Shared with the signal handler. Static: a handler left installed after a thread did not
// answer must never see freed memory.
struct Broadcast {
  ThreadFunction function = nullptr;
  const void* context = nullptr;
  std::atomic<int> next{0};
  pid_t tid[kMaxThreads] = {};
  int result[kMaxThreads] = {};
  std::atomic<bool> done[kMaxThreads] = {};
};
Broadcast g_broadcast;
std::mutex g_mutex;       // one broadcast at a time
bool g_stranded = false;  // a signal went unanswered: its handler stays installed

void on_signal(int, siginfo_t* info, void*) {
  if (info->si_code != SI_TKILL || info->si_pid != getpid()) return;  // not ours
  const int saved_errno = errno;
  const int slot = g_broadcast.next.fetch_add(1);
  if (slot < kMaxThreads && g_broadcast.function != nullptr) {
    g_broadcast.tid[slot] = static_cast<pid_t>(syscall(SYS_gettid));
    g_broadcast.result[slot] = g_broadcast.function(g_broadcast.context);
    g_broadcast.done[slot].store(true, std::memory_order_release);
  }
  errno = saved_errno;
}

// A real-time signal nobody handles (Node and V8 use none of them); 0 if there is none.
int install_handler(struct sigaction& previous) {
  for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL)
      continue;
    struct sigaction action {};
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&action.sa_mask);
    if (sigaction(sig, &action, &previous) == 0) return sig;
  }
  return 0;
}

bool thread_exists(pid_t tid) { return access(("/proc/self/task/" + std::to_string(tid)).c_str(), F_OK) == 0; }

std::string describe_thread(pid_t tid, const std::string& name) {
  return "thread " + std::to_string(tid) + (name.empty() ? "" : " (" + name + ")");
}

SetupError broadcast(int sig, const std::string& what, EveryThreadResult& result) {
  const auto self = static_cast<pid_t>(syscall(SYS_gettid));
  const pid_t pid = getpid();
  std::set<pid_t> blocking;
  for (int round = 0; round < 100; round++) {
    std::vector<std::pair<pid_t, std::string>> sent;
    for (const ThreadCredentials& t : read_thread_credentials()) {
      if (t.tid == self || result.reached.count(t.tid) != 0 || blocking.count(t.tid) != 0) continue;
      if ((t.blocked_signals >> (sig - 1) & 1) != 0) {
        blocking.insert(t.tid);
        continue;
      }
      if (syscall(SYS_tgkill, pid, t.tid, sig) == 0) sent.emplace_back(t.tid, t.name);
    }
    if (sent.empty()) return {};
    const auto deadline = std::chrono::steady_clock::now() + kThreadDeadline;
    for (;;) {
      const int answered = std::min(g_broadcast.next.load(), kMaxThreads);
      for (int slot = 0; slot < answered; slot++) {
        if (!g_broadcast.done[slot].load(std::memory_order_acquire)) continue;
        const pid_t tid = g_broadcast.tid[slot];
        if (result.reached.insert(tid).second && g_broadcast.result[slot] != 0)
          return setup_error("PRIVILEGE_DROP",
                             describe_errno(what + " failed in " + describe_thread(tid, ""), g_broadcast.result[slot]),
                             g_broadcast.result[slot]);
      }
      if (g_broadcast.next.load() >= kMaxThreads)
        return setup_error("PRIVILEGE_DROP",
                           "more than " + std::to_string(kMaxThreads) + " threads: cannot " + what + " in all of them");
      // A thread that ended before it ran the handler took its pending signal with it.
      const bool waiting = std::any_of(sent.begin(), sent.end(), [&](const auto& t) {
        return result.reached.count(t.first) == 0 && thread_exists(t.first);
      });
      if (!waiting) break;
      if (std::chrono::steady_clock::now() > deadline) {
        g_stranded = true;
        for (const auto& [tid, name] : sent)
          if (result.reached.count(tid) == 0 && thread_exists(tid))
            return setup_error("PRIVILEGE_DROP", describe_thread(tid, name) + " did not " + what +
                                                     " within 5 s (it blocks signal " + std::to_string(sig) +
                                                     "): it is unchanged");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return setup_error("PRIVILEGE_DROP", "threads kept starting while trying to " + what + ": try again");
}

}  // namespace

SetupError run_in_every_other_thread(ThreadFunction function, const void* context, const std::string& what,
                                     EveryThreadResult& result) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_stranded)
    return setup_error("PRIVILEGE_DROP",
                       "an earlier attempt to " + what + " did not reach every thread: restart the process");
  g_broadcast.function = function;
  g_broadcast.context = context;
  g_broadcast.next.store(0);
  for (auto& done : g_broadcast.done) done.store(false);
  struct sigaction previous {};
  const int sig = install_handler(previous);
  if (sig == 0) return setup_error("PRIVILEGE_DROP", "no free real-time signal to reach the other threads with");
  SetupError error = broadcast(sig, what, result);
  // Every signal sent was taken (or went with its thread): the old disposition is safe again.
  if (!g_stranded) sigaction(sig, &previous, nullptr);
  return error;
}

}  // namespace ovnpsample
