// The reader thread following the psample family through unregistrations and registrations
// (module reloads, Open vSwitch upgrades), including the ones whose notifications were lost.
#include <cerrno>
#include <chrono>
#include <mutex>

#include "socket/reader.h"

namespace ovnpsample {

// The kernel drops a family's group memberships when the family is unregistered (psample module
// unloaded, Open vSwitch upgrade), and registering it again may give it a new family id and new
// group ids: without following it, the socket would never hear a sample again.
void Reader::handle_controller(const uint8_t* message, size_t len) {
  FamilyInfo family;
  const FamilyEvent event = parse_family_event(message, len, family);
  if (event == FamilyEvent::kOther || family.name != "psample") return;
  if (event == FamilyEvent::kUnregistered)
    open_gap();
  else
    follow_family(family);
}

void Reader::open_gap() {
  if (gap_open_) return;
  gap_open_ = true;
  gap_start_ = std::chrono::steady_clock::now();
  counting_[kFamilyGaps]++;
}

void Reader::follow_family(const FamilyInfo& family) {
  // A registration whose unregistration was missed (dropped with a full receive buffer) still
  // cost the membership; one that changes nothing (a duplicate) did not.
  const bool lost = gap_open_ || family.id != socket_.family_id || !in_packets_group(socket_);
  OpenedSocket followed = socket_;
  if (const int err = follow_psample_family(options_, family, followed); err != 0) {
    fail(err);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  socket_ = followed;
  if (!lost) return;
  if (gap_open_) {
    last_gap_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - gap_start_).count();
  } else {
    last_gap_ms_ = -1;
    counting_[kFamilyGaps]++;
  }
  gap_open_ = false;
  counting_[kRejoins]++;
}

// A full receive buffer can swallow psample's unregistration and its registration both: the
// membership is then gone and no notification will ever say so. After the kernel dropped
// messages, the membership itself is checked, and the family asked for when it is gone.
void Reader::verify_membership() {
  if (options_.protocol != SourceProtocol::kKernelPsample || closing_) return;
  if (!gap_open_ && in_packets_group(socket_)) return;
  FamilyInfo family;
  const int err = lookup_psample_family(family);
  if (err == ENOENT)
    open_gap();  // its registration, when it comes, is a notification again
  else if (err == 0)
    follow_family(family);
  else
    fail(err);
}

}  // namespace ovnpsample
