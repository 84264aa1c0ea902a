// Multicasts psample-format netlink messages on NETLINK_USERSOCK, as fast as possible or paced.
//
//   sender --group G --family F --count N [--rate MSGS_PER_S]
//   sender --clock-offset
//
// One message per datagram, as the kernel's psample does. Prints one JSON line when done.
// --clock-offset prints CLOCK_REALTIME - CLOCK_MONOTONIC so a reader that only has a monotonic
// clock (libuv's hrtime) can turn the TIMESTAMP attribute into its own time base.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// Attribute numbers of include/uapi/linux/psample.h; bookworm's headers predate USER_COOKIE (6.11).
enum {
  ATTR_IIFINDEX = 0,
  ATTR_ORIGSIZE = 2,
  ATTR_SAMPLE_GROUP = 3,
  ATTR_GROUP_SEQ = 4,
  ATTR_SAMPLE_RATE = 5,
  ATTR_DATA = 6,
  ATTR_TIMESTAMP = 13,
  ATTR_PROTO = 14,
  ATTR_USER_COOKIE = 15,
};

enum { PSAMPLE_CMD_SAMPLE = 0, PSAMPLE_GENL_VERSION = 1 };

// A sampled frame is truncated to this many bytes, like a psample trunc_size.
enum { SAMPLED_BYTES = 150 };

enum { IPV4_DONT_FRAGMENT = 0x40, LINUX_DEFAULT_TTL = 64 };

static uint64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void print_clock_offset(void) {
  // The pair with the tightest monotonic bracket gives the least uncertain offset.
  int64_t best_offset = 0;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 1000; i++) {
    uint64_t before = now_ns(CLOCK_MONOTONIC);
    uint64_t real = now_ns(CLOCK_REALTIME);
    uint64_t after = now_ns(CLOCK_MONOTONIC);
    if (after - before < best_width) {
      best_width = after - before;
      best_offset = (int64_t)(real - (before + (after - before) / 2));
    }
  }
  printf("{\"clockOffsetNs\":\"%lld\",\"uncertaintyNs\":%llu}\n", (long long)best_offset,
         (unsigned long long)best_width);
}

static uint16_t ipv4_checksum(const uint8_t* header, size_t length) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < length; i += 2) sum += (uint32_t)(header[i] << 8 | header[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

// An HTTP readiness probe from a node to a pod, as an OVN ACL sample would carry it.
// Returns the frame's original length; `frame` receives its first SAMPLED_BYTES bytes.
static uint32_t build_sampled_frame(uint8_t frame[SAMPLED_BYTES]) {
  static const char payload[] =
      "GET /healthz HTTP/1.1\r\nHost: 10.244.1.5:8080\r\nUser-Agent: kube-probe/1.31\r\n"
      "Accept: */*\r\nConnection: close\r\n\r\n";
  const uint32_t tcp_length = 32;
  const uint32_t ip_length = 20 + tcp_length + (uint32_t)(sizeof payload - 1);
  uint8_t full[14 + 20 + 32 + sizeof payload];
  memset(full, 0, sizeof full);

  static const uint8_t ethernet[14] = {0x0a, 0x58, 0x0a, 0xf4, 0x01, 0x05, 0x0a,
                                       0x58, 0x0a, 0xf4, 0x01, 0x01, 0x08, 0x00};
  memcpy(full, ethernet, sizeof ethernet);

  uint8_t* ip = full + 14;
  ip[0] = 0x45;
  ip[2] = (uint8_t)(ip_length >> 8);
  ip[3] = (uint8_t)ip_length;
  ip[4] = 0x5c;
  ip[5] = 0x21;
  ip[6] = IPV4_DONT_FRAGMENT;
  ip[8] = LINUX_DEFAULT_TTL;
  ip[9] = IPPROTO_TCP;
  static const uint8_t addresses[8] = {10, 244, 1, 2, 10, 244, 1, 5};
  memcpy(ip + 12, addresses, sizeof addresses);
  uint16_t checksum = ipv4_checksum(ip, 20);
  ip[10] = (uint8_t)(checksum >> 8);
  ip[11] = (uint8_t)checksum;

  static const uint8_t tcp[32] = {
      0xa4, 0x1e, 0x1f, 0x90,                                                  // 42014 -> 8080
      0x6b, 0x8b, 0x45, 0x67, 0x1c, 0x2d, 0x3e, 0x4f,                          // seq, ack
      0x80, 0x18, 0x01, 0xf6, 0x3a, 0x7c, 0x00, 0x00,                          // doff 8, PSH|ACK, window, checksum
      0x01, 0x01, 0x08, 0x0a, 0x9a, 0x1b, 0x2c, 0x3d, 0x5e, 0x6f, 0x70, 0x81,  // NOP NOP TS
  };
  memcpy(ip + 20, tcp, sizeof tcp);
  memcpy(ip + 20 + sizeof tcp, payload, sizeof payload - 1);

  memcpy(frame, full, SAMPLED_BYTES);
  return 14 + ip_length;
}

struct message {
  uint8_t bytes[512];
  size_t length;
  uint32_t* group_seq;
  uint64_t* timestamp;
  uint8_t* tcp_seq;  // in DATA: each message samples another packet of the connection
};

// Where the TCP sequence number sits in the sampled frame: Ethernet, IPv4, then the ports.
enum { TCP_SEQ_OFFSET = 14 + 20 + 4 };

static void* put_attr(struct message* m, uint16_t type, const void* value, uint16_t length) {
  struct nlattr* attr = (struct nlattr*)(m->bytes + m->length);
  attr->nla_type = type;
  attr->nla_len = (uint16_t)(NLA_HDRLEN + length);
  memcpy((uint8_t*)attr + NLA_HDRLEN, value, length);
  m->length += NLA_ALIGN(attr->nla_len);
  return (uint8_t*)attr + NLA_HDRLEN;
}

// Attribute order and widths follow a real OVS local-sampling message (vectors/psample/ovs-2).
static void build_message(struct message* m, uint16_t family) {
  memset(m, 0, sizeof *m);
  m->length = NLMSG_HDRLEN + GENL_HDRLEN;
  struct genlmsghdr* genl = (struct genlmsghdr*)(m->bytes + NLMSG_HDRLEN);
  genl->cmd = PSAMPLE_CMD_SAMPLE;
  genl->version = PSAMPLE_GENL_VERSION;

  uint8_t frame[SAMPLED_BYTES];
  uint32_t orig_size = build_sampled_frame(frame);
  uint16_t iifindex = 7;
  uint32_t rate = 1;
  uint32_t group = 10;
  uint32_t zero32 = 0;
  uint64_t zero64 = 0;
  uint16_t proto = 0x0800;
  // OVN cookie: observation domain id then observation point id, both big-endian.
  uint32_t cookie[2] = {htonl(0x2b000003), htonl(0x000003f4)};

  put_attr(m, ATTR_IIFINDEX, &iifindex, sizeof iifindex);
  put_attr(m, ATTR_SAMPLE_RATE, &rate, sizeof rate);
  put_attr(m, ATTR_ORIGSIZE, &orig_size, sizeof orig_size);
  put_attr(m, ATTR_SAMPLE_GROUP, &group, sizeof group);
  m->group_seq = put_attr(m, ATTR_GROUP_SEQ, &zero32, sizeof zero32);
  m->timestamp = put_attr(m, ATTR_TIMESTAMP, &zero64, sizeof zero64);
  put_attr(m, ATTR_PROTO, &proto, sizeof proto);
  m->tcp_seq = (uint8_t*)put_attr(m, ATTR_DATA, frame, sizeof frame) + TCP_SEQ_OFFSET;
  put_attr(m, ATTR_USER_COOKIE, cookie, sizeof cookie);

  struct nlmsghdr* header = (struct nlmsghdr*)m->bytes;
  header->nlmsg_len = (uint32_t)m->length;
  header->nlmsg_type = family;
}

static unsigned long parse_number(const char* text, const char* name) {
  char* end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 0);
  if (errno || *end || end == text) {
    fprintf(stderr, "sender: %s must be a number, got '%s'\n", name, text);
    exit(2);
  }
  return value;
}

int main(int argc, char** argv) {
  unsigned long group = 0, family = 0, count = 0, rate = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--clock-offset")) {
      print_clock_offset();
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "sender: %s needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--group"))
      group = parse_number(argv[++i], "--group");
    else if (!strcmp(argv[i], "--family"))
      family = parse_number(argv[++i], "--family");
    else if (!strcmp(argv[i], "--count"))
      count = parse_number(argv[++i], "--count");
    else if (!strcmp(argv[i], "--rate"))
      rate = parse_number(argv[++i], "--rate");
    else {
      fprintf(stderr, "sender: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (group < 1 || group > 32 || family < NLMSG_MIN_TYPE || family > 0xffff || count == 0) {
    fprintf(stderr, "usage: sender --group 1..32 --family 16..65535 --count N [--rate MSGS_PER_S]\n");
    return 2;
  }

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
  if (fd < 0) {
    perror("sender: socket(NETLINK_USERSOCK)");
    return 1;
  }
  struct sockaddr_nl destination = {.nl_family = AF_NETLINK, .nl_groups = 1u << (group - 1)};

  struct message m;
  build_message(&m, (uint16_t)family);

  uint64_t interval_ns = rate ? 1000000000ull / rate : 0;
  uint64_t start = now_ns(CLOCK_MONOTONIC);
  uint64_t failed = 0;
  int first_errno = 0;
  for (unsigned long i = 0; i < count; i++) {
    // Absolute deadlines keep the average rate exact even when one sleep overshoots; a deadline
    // already past is not slept for (the timer slack, 50 us, would make every such sleep cost
    // that much: above ~20k/s the rate fell far short of the one asked).
    if (interval_ns && now_ns(CLOCK_MONOTONIC) < start + i * interval_ns) {
      uint64_t due = start + i * interval_ns;
      struct timespec deadline = {.tv_sec = (time_t)(due / 1000000000ull), .tv_nsec = (long)(due % 1000000000ull)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
      }
    }
    *m.group_seq = (uint32_t)i;
    *m.timestamp = now_ns(CLOCK_REALTIME);
    // The connection moves on by one full segment per packet (the checksum is not checked here).
    const uint32_t seq = 0x6b8b4567u + (uint32_t)i * 1448u;
    m.tcp_seq[0] = (uint8_t)(seq >> 24);
    m.tcp_seq[1] = (uint8_t)(seq >> 16);
    m.tcp_seq[2] = (uint8_t)(seq >> 8);
    m.tcp_seq[3] = (uint8_t)seq;
    // USERSOCK has no kernel socket at port 0: the multicast is delivered, then the unicast
    // half of the same sendto fails with ECONNREFUSED.
    if (sendto(fd, m.bytes, m.length, 0, (struct sockaddr*)&destination, sizeof destination) < 0 &&
        errno != ECONNREFUSED) {
      if (!first_errno) first_errno = errno;
      failed++;
    }
  }
  double seconds = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
  close(fd);

  printf("{\"sent\":%lu,\"messageBytes\":%zu,\"seconds\":%.6f,\"rate\":%.0f}\n", count - (unsigned long)failed,
         m.length, seconds, (double)(count - failed) / seconds);
  if (failed) {
    fprintf(stderr, "sender: %llu of %lu sends failed, the first with: %s\n", (unsigned long long)failed, count,
            strerror(first_errno));
    return 1;
  }
  return 0;
}
