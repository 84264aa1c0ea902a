// The reference reader: the least a userspace program must do to consume psample multicast,
// one recv() per datagram and a count, so its rate is the ceiling for any reader on this machine.
//
//   ref-reader --group G --family F --count N --rcvbuf BYTES [--latency]
//
// Prints "ready" once joined, then one JSON line when N messages were accounted for (received or
// dropped by the kernel) or nothing arrived for QUIET_MS. --latency also reads each message's
// TIMESTAMP (CLOCK_REALTIME at send) and reports send-to-recv percentiles.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

enum { ATTR_TIMESTAMP = 13 };

// Long enough for a sender that starts slowly, short enough not to stretch every run.
enum { FIRST_MESSAGE_TIMEOUT_MS = 20000, QUIET_MS = 500 };

static uint64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_receive_timeout(int fd, int milliseconds) {
  struct timeval tv = {.tv_sec = milliseconds / 1000, .tv_usec = (milliseconds % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static unsigned long parse_number(const char* text, const char* name) {
  char* end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 0);
  if (errno || *end || end == text) {
    fprintf(stderr, "ref-reader: %s must be a number, got '%s'\n", name, text);
    exit(2);
  }
  return value;
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

// Nearest-rank percentile of a sorted array.
static uint64_t percentile(const uint64_t* sorted, size_t n, double p) {
  size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

static int timestamp_of(const struct nlmsghdr* header, uint64_t* timestamp) {
  const uint8_t* attr = (const uint8_t*)header + NLMSG_HDRLEN + GENL_HDRLEN;
  const uint8_t* end = (const uint8_t*)header + header->nlmsg_len;
  while (attr + NLA_HDRLEN <= end) {
    const struct nlattr* a = (const struct nlattr*)attr;
    if (a->nla_len < NLA_HDRLEN || attr + a->nla_len > end) return 0;
    if ((a->nla_type & NLA_TYPE_MASK) == ATTR_TIMESTAMP && a->nla_len == NLA_HDRLEN + 8) {
      memcpy(timestamp, attr + NLA_HDRLEN, 8);
      return 1;
    }
    attr += NLA_ALIGN(a->nla_len);
  }
  return 0;
}

int main(int argc, char** argv) {
  unsigned long group = 0, family = 0, count = 0, rcvbuf = 0;
  int latency = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--latency"))
      latency = 1;
    else if (i + 1 >= argc) {
      fprintf(stderr, "ref-reader: %s needs a value\n", argv[i]);
      return 2;
    } else if (!strcmp(argv[i], "--group"))
      group = parse_number(argv[++i], "--group");
    else if (!strcmp(argv[i], "--family"))
      family = parse_number(argv[++i], "--family");
    else if (!strcmp(argv[i], "--count"))
      count = parse_number(argv[++i], "--count");
    else if (!strcmp(argv[i], "--rcvbuf"))
      rcvbuf = parse_number(argv[++i], "--rcvbuf");
    else {
      fprintf(stderr, "ref-reader: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (group < 1 || group > 32 || family < NLMSG_MIN_TYPE || family > 0xffff || count == 0 || rcvbuf == 0 ||
      rcvbuf > INT32_MAX) {
    fprintf(stderr,
            "usage: ref-reader --group 1..32 --family 16..65535 --count N --rcvbuf BYTES "
            "[--latency]\n");
    return 2;
  }

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
  if (fd < 0) {
    perror("ref-reader: socket(NETLINK_USERSOCK)");
    return 1;
  }
  int size = (int)rcvbuf;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0 &&
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) < 0) {
    perror("ref-reader: SO_RCVBUF");
    return 1;
  }
  // ovn-psample sets it too: without it the kernel drops everything after one overrun until the
  // queue is empty, and both readers must face the same drop behaviour.
  int on = 1;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on) < 0) {
    perror("ref-reader: NETLINK_NO_ENOBUFS");
    return 1;
  }
  struct sockaddr_nl local = {.nl_family = AF_NETLINK};
  int membership = (int)group;
  if (bind(fd, (struct sockaddr*)&local, sizeof local) < 0 ||
      setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &membership, sizeof membership) < 0) {
    perror("ref-reader: joining the multicast group (root or CAP_NET_ADMIN needed)");
    return 1;
  }
  int effective_rcvbuf = 0;
  socklen_t option_length = sizeof effective_rcvbuf;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &effective_rcvbuf, &option_length);

  uint64_t* latencies = latency ? calloc(count, sizeof *latencies) : NULL;
  if (latency && !latencies) {
    fprintf(stderr, "ref-reader: cannot allocate %lu latency slots\n", count);
    return 1;
  }

  set_receive_timeout(fd, FIRST_MESSAGE_TIMEOUT_MS);
  printf("ready\n");
  fflush(stdout);
  // CPU time is what a busy machine cannot steal: it compares readers when wall time is noisy.
  const uint64_t cpu_start = now_ns(CLOCK_PROCESS_CPUTIME_ID);

  static uint8_t buffer[1 << 16];
  uint64_t received = 0, datagrams = 0, foreign = 0, first = 0, last = 0;
  const char* stop_reason = "count";
  while (received < count) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      stop_reason = errno == EAGAIN ? "quiet" : strerror(errno);
      break;
    }
    uint64_t now = now_ns(CLOCK_MONOTONIC);
    if (!datagrams) {
      first = now;
      set_receive_timeout(fd, QUIET_MS);
    }
    last = now;
    datagrams++;
    size_t remaining = (size_t)n;
    for (const struct nlmsghdr* header = (const struct nlmsghdr*)buffer; NLMSG_OK(header, remaining);
         header = NLMSG_NEXT(header, remaining)) {
      if (header->nlmsg_type != family) {
        foreign++;
        continue;
      }
      uint64_t timestamp;
      if (latency && received < count && timestamp_of(header, &timestamp)) {
        latencies[received] = now_ns(CLOCK_REALTIME) - timestamp;
      }
      received++;
    }
  }

  const double cpu_seconds = (double)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) / 1e9;
  uint32_t meminfo[SK_MEMINFO_VARS] = {0};
  option_length = sizeof meminfo;
  getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &option_length);
  close(fd);

  double seconds = (double)(last - first) / 1e9;
  printf(
      "{\"received\":%llu,\"datagrams\":%llu,\"kernelDrops\":%u,\"foreign\":%llu,"
      "\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"rcvbuf\":%d,\"stop\":\"%s\"",
      (unsigned long long)received, (unsigned long long)datagrams, meminfo[SK_MEMINFO_DROPS],
      (unsigned long long)foreign, seconds, cpu_seconds, effective_rcvbuf, stop_reason);
  if (latency && received > 0) {
    size_t n = received < count ? (size_t)received : (size_t)count;
    qsort(latencies, n, sizeof *latencies, compare_u64);
    printf(",\"latencyNs\":{\"p50\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu}",
           (unsigned long long)percentile(latencies, n, 50), (unsigned long long)percentile(latencies, n, 99),
           (unsigned long long)percentile(latencies, n, 99.9), (unsigned long long)latencies[n - 1]);
  }
  printf("}\n");
  return 0;
}
