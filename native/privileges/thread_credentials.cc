#include "privileges/thread_credentials.h"

#include <dirent.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ovnpsample {

namespace {

bool read_ids(std::istringstream& line, uint32_t (&ids)[4]) {
  for (uint32_t& id : ids)
    if (!(line >> id)) return false;
  return true;
}

bool read_hex(std::istringstream& line, uint64_t& value) {
  std::string word;
  if (!(line >> word) || word.empty()) return false;
  char* end = nullptr;
  value = std::strtoull(word.c_str(), &end, 16);
  return *end == '\0';
}

}  // namespace

bool parse_thread_status(const std::string& text, ThreadCredentials& out) {
  std::istringstream lines(text);
  std::string line;
  unsigned found = 0;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::istringstream value(line.substr(colon + 1));
    bool ok = true;
    if (key == "Name") {
      const size_t start = line.find_first_not_of(" \t", colon + 1);
      out.name = start == std::string::npos ? std::string() : line.substr(start);
      continue;
    }
    if (key == "Uid")
      ok = read_ids(value, out.uid);
    else if (key == "Gid")
      ok = read_ids(value, out.gid);
    else if (key == "Groups") {
      out.groups.clear();
      for (uint32_t g; value >> g;) out.groups.push_back(g);
      continue;
    } else if (key == "CapInh")
      ok = read_hex(value, out.inheritable);
    else if (key == "CapPrm")
      ok = read_hex(value, out.permitted);
    else if (key == "CapEff")
      ok = read_hex(value, out.effective);
    else if (key == "CapBnd")
      ok = read_hex(value, out.bounding);
    else if (key == "CapAmb")
      ok = read_hex(value, out.ambient);
    else if (key == "SigBlk")
      ok = read_hex(value, out.blocked_signals);
    else if (key == "NoNewPrivs") {
      int flag = 0;
      ok = static_cast<bool>(value >> flag);
      out.no_new_privs = flag != 0;
    } else {
      continue;
    }
    if (!ok) return false;
    found++;
  }
  // Uid Gid CapInh CapPrm CapEff CapBnd CapAmb SigBlk NoNewPrivs: every kernel since 4.10 has them.
  return found == 9;
}

std::vector<ThreadCredentials> read_thread_credentials() {
  std::vector<ThreadCredentials> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the DIR stream is this call's own, which makes glibc's readdir safe.
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream file(std::string("/proc/self/task/") + entry->d_name + "/status");
    // Read whole through iterators: a default-constructed stringstream is GCC 9's constructor
    // (GLIBCXX_3.4.26), which RHEL 8's libstdc++ lacks (README "Versions").
    const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    ThreadCredentials thread;
    const char* name_end = entry->d_name + std::strlen(entry->d_name);
    if (std::from_chars(entry->d_name, name_end, thread.tid).ptr != name_end) continue;
    if (file && parse_thread_status(text, thread)) threads.push_back(std::move(thread));
  }
  closedir(dir);
  return threads;
}

}  // namespace ovnpsample
