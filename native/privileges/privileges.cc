#include "privileges/privileges.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>

#include "privileges/every_thread.h"

namespace ovnpsample {

namespace {

struct CapSets {
  uint64_t effective = 0;
  uint64_t permitted = 0;
  uint64_t inheritable = 0;
};

constexpr uint64_t bit(int cap) { return uint64_t{1} << cap; }

// Returns 0 or an errno; raw system calls only (signal handlers use it).
int get_caps(CapSets& out) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return errno;
  out.effective = data[0].effective | uint64_t{data[1].effective} << 32;
  out.permitted = data[0].permitted | uint64_t{data[1].permitted} << 32;
  out.inheritable = data[0].inheritable | uint64_t{data[1].inheritable} << 32;
  return 0;
}

int set_caps(const CapSets& caps) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  for (int i = 0; i < 2; i++) {
    data[i].effective = static_cast<uint32_t>(caps.effective >> (32 * i));
    data[i].permitted = static_cast<uint32_t>(caps.permitted >> (32 * i));
    data[i].inheritable = static_cast<uint32_t>(caps.inheritable >> (32 * i));
  }
  return syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

// What every thread does to itself.
struct ThreadPlan {
  bool drop_bounding = false;
  // A user switch follows: its setresuid needs CAP_SETUID and CAP_SETGID in every thread, and
  // the kernel then clears permitted, effective and ambient itself.
  bool keep_permitted = false;
  int last_cap = CAP_LAST_CAP;
};

// System calls only: this runs in signal handlers. Returns 0 or an errno.
int apply_plan(const void* context) {
  const ThreadPlan& plan = *static_cast<const ThreadPlan*>(context);
  // EINVAL: a kernel before 4.3, without ambient capabilities.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  if (plan.drop_bounding)
    for (int cap = 0; cap <= plan.last_cap; cap++)
      if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return errno;
  // Set, it would let the permitted set survive the user switch (a locked bit shows afterwards).
  (void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  CapSets caps;
  if (plan.keep_permitted) {
    if (const int err = get_caps(caps); err != 0) return err;
    caps.inheritable = 0;
  }
  if (const int err = set_caps(caps); err != 0) return err;
  // No setuid or file-capability program run later can hand any of it back.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return 0;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Target {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // sorted, as the kernel keeps them
};

SetupError resolve_target(const PrivilegeRequest& request, Target& target) {
  std::vector<char> buffer(1 << 16);
  passwd entry{};
  passwd* user = nullptr;
  if (all_digits(request.user)) {
    target.uid = static_cast<uid_t>(std::strtoul(request.user.c_str(), nullptr, 10));
    (void)getpwuid_r(target.uid, &entry, buffer.data(), buffer.size(), &user);
  } else {
    (void)getpwnam_r(request.user.c_str(), &entry, buffer.data(), buffer.size(), &user);
    if (user == nullptr)
      return setup_error("INVALID_OPTION", "dropPrivileges.user: there is no user '" + request.user +
                                               "' (getpwnam): give an existing user name or a numeric uid");
    target.uid = user->pw_uid;
  }
  if (target.uid == 0)
    return setup_error("INVALID_OPTION",
                       "dropPrivileges.user: uid 0 keeps root's privileges: name an unprivileged user");
  if (!request.group.empty()) {
    if (all_digits(request.group)) {
      target.gid = static_cast<gid_t>(std::strtoul(request.group.c_str(), nullptr, 10));
    } else {
      std::vector<char> group_buffer(1 << 16);
      group group_entry{};
      group* found = nullptr;
      (void)getgrnam_r(request.group.c_str(), &group_entry, group_buffer.data(), group_buffer.size(), &found);
      if (found == nullptr)
        return setup_error("INVALID_OPTION", "dropPrivileges.group: there is no group '" + request.group +
                                                 "' (getgrnam): give an existing group name or a numeric gid");
      target.gid = found->gr_gid;
    }
  } else if (user != nullptr) {
    target.gid = user->pw_gid;
  } else {
    return setup_error("INVALID_OPTION", "dropPrivileges.user: uid " + request.user +
                                             " has no passwd entry, so no primary group: give the group too");
  }
  target.groups = {target.gid};
  if (user != nullptr) {
    // The user's supplementary groups, as login(1) and initgroups(3) would set them.
    int count = 32;
    for (;;) {
      target.groups.assign(static_cast<size_t>(count), 0);
      int n = count;
      if (getgrouplist(user->pw_name, target.gid, target.groups.data(), &n) >= 0) {
        target.groups.resize(static_cast<size_t>(n));
        break;
      }
      if (n <= count) n = count * 2;
      count = n;
    }
  }
  std::sort(target.groups.begin(), target.groups.end());
  target.groups.erase(std::unique(target.groups.begin(), target.groups.end()), target.groups.end());
  return {};
}

bool already_target(const Target& target) {
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0) return false;
  if (r != target.uid || e != target.uid || s != target.uid) return false;
  if (rg != target.gid || eg != target.gid || sg != target.gid) return false;
  std::vector<gid_t> groups(static_cast<size_t>(std::max(getgroups(0, nullptr), 0)));
  if (getgroups(static_cast<int>(groups.size()), groups.data()) < 0) return false;
  std::sort(groups.begin(), groups.end());
  return groups == target.groups;
}

int last_capability() {
  std::ifstream file("/proc/sys/kernel/cap_last_cap");
  int last = CAP_LAST_CAP;
  file >> last;
  return last;
}

// Process-wide: glibc has every thread make each call.
SetupError switch_ids(const Target& target) {
  if (setgroups(target.groups.size(), target.groups.data()) != 0)
    return setup_error("PRIVILEGE_DROP", describe_errno("setgroups", errno), errno);
  if (setresgid(target.gid, target.gid, target.gid) != 0)
    return setup_error("PRIVILEGE_DROP", describe_errno("setresgid " + std::to_string(target.gid), errno), errno);
  if (setresuid(target.uid, target.uid, target.uid) != 0)
    return setup_error("PRIVILEGE_DROP", describe_errno("setresuid " + std::to_string(target.uid), errno), errno);
  return {};
}

std::string describe_thread(const ThreadCredentials& t) {
  return "thread " + std::to_string(t.tid) + " (" + t.name + ")";
}

std::string hex(uint64_t value) {
  char text[17];
  snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Reads every thread back: the drop is only believed as the kernel reports it.
SetupError verify(const std::set<pid_t>& reached, PrivilegeReport& report) {
  const auto self = static_cast<pid_t>(syscall(SYS_gettid));
  report.threads = 0;
  for (const ThreadCredentials& t : read_thread_credentials()) {
    report.threads++;
    const std::string who = describe_thread(t);
    if (report.switched_user)
      for (int i = 0; i < 4; i++)
        if (t.uid[i] != report.uid || t.gid[i] != report.gid)
          return setup_error("PRIVILEGE_DROP", who + " did not switch to uid " + std::to_string(report.uid) + " gid " +
                                                   std::to_string(report.gid));
    const bool was_reached = t.tid == self || reached.count(t.tid) != 0;
    const bool kept_bounding = report.bounding_cleared && t.bounding != 0;
    if (was_reached && !t.no_new_privs) return setup_error("PRIVILEGE_DROP", who + " did not set no_new_privs");
    if (!t.holds_capabilities() && !kept_bounding) continue;
    if (was_reached || (report.switched_user && (t.permitted | t.effective | t.ambient) != 0))
      return setup_error("PRIVILEGE_DROP", who + " still holds capabilities: CapInh " + hex(t.inheritable) +
                                               " CapPrm " + hex(t.permitted) + " CapEff " + hex(t.effective) +
                                               " CapBnd " + hex(t.bounding) + " CapAmb " + hex(t.ambient));
    report.unreached.push_back(t);
  }
  return {};
}

}  // namespace

SetupError drop_privileges(const PrivilegeRequest& request, PrivilegeReport& report) {
  static std::mutex mutex;  // one drop at a time, from whichever JavaScript thread
  std::lock_guard<std::mutex> lock(mutex);
  if (request.user.empty() && !request.group.empty())
    return setup_error("INVALID_OPTION", "dropPrivileges.group: give the user too (the group alone is not switched)");
  Target target;
  if (!request.user.empty())
    if (auto err = resolve_target(request, target); err.failed()) return err;
  CapSets own;
  if (const int err = get_caps(own); err != 0) return setup_error("PRIVILEGE_DROP", describe_errno("capget", err), err);

  const bool switching = !request.user.empty() && !already_target(target);
  if (switching && (own.effective & (bit(CAP_SETUID) | bit(CAP_SETGID))) != (bit(CAP_SETUID) | bit(CAP_SETGID)))
    return setup_error("PRIVILEGE_DROP",
                       "switching to user " + request.user +
                           " needs CAP_SETUID and CAP_SETGID, which this process "
                           "lacks: start it as root, or only give up capabilities (dropPrivileges: true, "
                           "--drop-privileges without a user)");
  ThreadPlan plan;
  plan.keep_permitted = switching;
  plan.last_cap = last_capability();
  plan.drop_bounding = (own.effective & bit(CAP_SETPCAP)) != 0;
  bool bounding_empty = true;
  for (int cap = 0; cap <= plan.last_cap; cap++)
    bounding_empty = bounding_empty && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1;
  report.bounding_cleared = plan.drop_bounding || bounding_empty;
  if (!report.bounding_cleared)
    report.bounding_kept_because =
        "removing a capability from the bounding set needs CAP_SETPCAP, which this process was not given; "
        "no_new_privs is set instead, so no program it runs can gain what the bounding set still allows";

  EveryThreadResult threads;
  SetupError err = run_in_every_other_thread(apply_plan, &plan, "give up privileges", threads);
  // Even after a failure elsewhere this thread gives up what it can: never more privilege than before.
  ThreadPlan self_plan = plan;
  self_plan.keep_permitted = plan.keep_permitted && !err.failed();
  if (const int self_err = apply_plan(&self_plan); self_err != 0 && !err.failed())
    err = setup_error("PRIVILEGE_DROP", describe_errno("giving up privileges failed in the calling thread", self_err),
                      self_err);
  if (err.failed()) return err;

  if (switching)
    if (err = switch_ids(target); err.failed()) return err;
  report.switched_user = !request.user.empty();
  report.uid = getuid();
  report.gid = getgid();
  report.groups.assign(static_cast<size_t>(std::max(getgroups(0, nullptr), 0)), 0);
  report.groups.resize(
      static_cast<size_t>(std::max(getgroups(static_cast<int>(report.groups.size()), report.groups.data()), 0)));
  return verify(threads.reached, report);
}

}  // namespace ovnpsample
