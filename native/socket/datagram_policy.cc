#include "socket/datagram_policy.h"

#include "socket/group_filter.h"

namespace ovnpsample {

void handle_datagram(const DatagramPolicy& policy, const Datagram& datagram, std::vector<Message>& parsed,
                     Stats& counting, DatagramSink& sink) {
  counting[kDatagrams]++;
  if (datagram.truncated) {  // cannot happen for psample; a foreign giant datagram
    counting[kMalformed]++;
    return;
  }
  // Only the kernel sends from port 0; anything else on a real psample socket is an impostor.
  if (!datagram.from_kernel_port && policy.kernel_only) {
    counting[kRejectedSender]++;
    return;
  }
  const uint8_t* data = datagram.data;
  parsed.clear();
  parse_datagram(data, datagram.length, policy.family_id, parsed, counting);
  for (const Message& m : parsed) {
    if (m.kind == MessageKind::kController) {
      counting[kControlMessages]++;
      // A peer namespace's copy (listenAllNsid) of a notification this namespace also gets.
      if (!datagram.has_nsid && !policy.closing) sink.handle_controller(data + m.whole.offset, m.whole.length);
      continue;
    }
    if (m.kind != MessageKind::kSample && m.kind != MessageKind::kGroup) {
      counting[kControlMessages]++;
      continue;
    }
    // Also behind the kernel filter: it leaves datagrams of several messages to userspace.
    if (!group_wanted(policy.groups, m.group)) {
      counting[kFilteredOut]++;
      continue;
    }
    if (policy.closing) {
      counting[kCloseDiscards]++;
      continue;
    }
    SampleBatch& batch = sink.batch();
    if (sink.queued_messages() + batch.count >= policy.queue_capacity ||
        sink.queued_bytes() + batch.size() >= policy.queue_bytes_limit) {
      counting[kQueueDrops]++;
      continue;
    }
    if (!sink.take(m, data)) batch.append(m, data, datagram.has_nsid, datagram.nsid);
    sink.appended();
  }
}

}  // namespace ovnpsample
