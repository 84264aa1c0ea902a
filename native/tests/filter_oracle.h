// What the group filter may and must do with a datagram, judged by the userspace rule
// (parse_datagram, then group_wanted for each sample and group event):
// - it never drops a datagram from which userspace would deliver or act upon anything: a wanted
//   sample or group event, a controller notification, a netlink error;
// - on one well-formed message filling the datagram (what the kernel's psample sends) it decides
//   exactly as userspace would: kept if and only if its group is wanted.
// Shared by the unit test (the verdict of the cBPF interpreter), the fuzz target and the kernel
// differential test (the kernel's verdict).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "socket/group_filter.h"
#include "wire/psample_parser.h"

namespace ovnpsample::testing {

inline const char* kind_name(MessageKind kind) {
  switch (kind) {
    case MessageKind::kSample:
      return "sample";
    case MessageKind::kGroup:
      return "group event";
    case MessageKind::kError:
      return "netlink error";
    case MessageKind::kDone:
      return "NLMSG_DONE";
    case MessageKind::kOverrun:
      return "NLMSG_OVERRUN";
    case MessageKind::kController:
      return "controller message";
  }
  return "?";
}

// nullopt when `kept` is a verdict the filter may give; otherwise why not.
inline std::optional<std::string> judge_filter_verdict(bool kept, const uint8_t* datagram, size_t length,
                                                       uint16_t family_id, const std::vector<uint32_t>& groups) {
  std::vector<Message> messages;
  Stats counters{};
  parse_datagram(datagram, length, family_id, messages, counters);
  const auto is_event = [](const Message& m) {
    return m.kind == MessageKind::kSample || m.kind == MessageKind::kGroup;
  };
  if (!kept) {
    for (const Message& m : messages) {
      if (is_event(m) && !group_wanted(groups, m.group)) continue;
      return std::string("dropped a datagram holding a ") + kind_name(m.kind) +
             (is_event(m) ? " of wanted group " + std::to_string(m.group) : std::string());
    }
    return std::nullopt;
  }
  const bool one_clean_message = messages.size() == 1 && is_event(messages[0]) && messages[0].whole.offset == 0 &&
                                 messages[0].whole.length == length && counters[kMalformed] == 0 &&
                                 counters[kForeign] == 0;
  if (one_clean_message && !group_wanted(groups, messages[0].group))
    return "kept a well-formed " + std::string(kind_name(messages[0].kind)) + " of unwanted group " +
           std::to_string(messages[0].group);
  return std::nullopt;
}

}  // namespace ovnpsample::testing
