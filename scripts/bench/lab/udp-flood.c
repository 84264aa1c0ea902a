// The lab benchmark's traffic: UDP datagrams of one flow, paced to a rate or as fast as possible.
//
//   udp-flood --dst IPV4 --dport PORT [--sport PORT] [--payload BYTES] [--cpu N]
//             (--seconds S [--rate PACKETS_PER_S] | --count N)
//
// --rate 0 (the default) sends unpaced. Pacing uses absolute deadlines (start + i / rate): a late
// wake-up is caught up by sending the packets that are due at once, so the average rate is exact
// even where one sleep costs more than the interval (qemu/TCG). --seconds is a fixed time: where
// the machine cannot reach the rate, fewer packets leave and the printed rate shows it. A fixed source port keeps every
// datagram in one flow: one conntrack entry, one datapath flow. --cpu N pins the sender (and so
// the softirq work its packets cause: veth, tc, OVS, psample) to CPU N at nice -10, so the load
// it offers does not depend on how much CPU the consumer being measured takes from it.
// Prints one JSON line: sent, failed, seconds, rate, and the wall clock (CLOCK_REALTIME, ns) of
// the first and last send, which the benchmark compares with the time of the last sample printed.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PAYLOAD = 1400, CLOCK_CHECK_EVERY = 64, PINNED_NICENESS = -10 };

static uint64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long parse_number(const char* text, const char* name) {
  char* end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 0);
  if (errno || *end || end == text) {
    fprintf(stderr, "udp-flood: %s must be a number, got '%s'\n", name, text);
    exit(2);
  }
  return value;
}

static void usage(void) {
  fprintf(stderr,
          "usage: udp-flood --dst IPV4 --dport PORT [--sport PORT] [--payload BYTES] [--cpu N] "
          "(--seconds S [--rate PPS] | --count N)\n");
  exit(2);
}

int main(int argc, char** argv) {
  const char* destination_text = NULL;
  unsigned long destination_port = 0, source_port = 0, payload_bytes = 64, seconds = 0, rate = 0, count = 0;
  long cpu = -1;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage();
    const char* name = argv[i];
    const char* value = argv[++i];
    if (!strcmp(name, "--dst"))
      destination_text = value;
    else if (!strcmp(name, "--dport"))
      destination_port = parse_number(value, name);
    else if (!strcmp(name, "--sport"))
      source_port = parse_number(value, name);
    else if (!strcmp(name, "--payload"))
      payload_bytes = parse_number(value, name);
    else if (!strcmp(name, "--seconds"))
      seconds = parse_number(value, name);
    else if (!strcmp(name, "--rate"))
      rate = parse_number(value, name);
    else if (!strcmp(name, "--count"))
      count = parse_number(value, name);
    else if (!strcmp(name, "--cpu"))
      cpu = (long)parse_number(value, name);
    else
      usage();
  }
  struct sockaddr_in destination = {.sin_family = AF_INET, .sin_port = htons((uint16_t)destination_port)};
  if (!destination_text || inet_pton(AF_INET, destination_text, &destination.sin_addr) != 1 || destination_port == 0 ||
      destination_port > 65535 || source_port > 65535 || payload_bytes > MAX_PAYLOAD ||
      (seconds == 0) == (count == 0) || (count && rate)) {
    usage();
  }

  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0 || setpriority(PRIO_PROCESS, 0, PINNED_NICENESS) < 0) {
      perror("udp-flood: --cpu (pinning and raising priority need root)");
      return 1;
    }
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    perror("udp-flood: socket");
    return 1;
  }
  if (source_port) {
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in source = {.sin_family = AF_INET, .sin_port = htons((uint16_t)source_port)};
    if (bind(fd, (struct sockaddr*)&source, sizeof source) < 0) {
      perror("udp-flood: bind --sport");
      return 1;
    }
  }
  if (connect(fd, (struct sockaddr*)&destination, sizeof destination) < 0) {
    perror("udp-flood: connect");
    return 1;
  }
  // The default 50 us of timer slack would make every paced sleep late.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  static uint8_t payload[MAX_PAYLOAD];
  memset(payload, 0x5a, sizeof payload);
  const uint64_t interval_ns = rate ? 1000000000ull / rate : 0;
  const uint64_t paced_total = rate ? rate * seconds : 0;
  const uint64_t start = now_ns(CLOCK_MONOTONIC);
  const uint64_t end = start + seconds * 1000000000ull;
  const uint64_t first_wall = now_ns(CLOCK_REALTIME);
  uint64_t sent = 0, failed = 0;
  int first_errno = 0;
  for (;;) {
    if (count) {
      if (sent + failed >= count) break;
    } else if (rate) {
      if (sent + failed >= paced_total) break;
      uint64_t due = start + (sent + failed) * interval_ns;
      uint64_t now = now_ns(CLOCK_MONOTONIC);
      // The time is fixed: a machine too slow for the rate sends less, and the rate says so.
      if (now >= end) break;
      if (now < due) {
        struct timespec deadline = {.tv_sec = (time_t)(due / 1000000000ull), .tv_nsec = (long)(due % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
        }
      }
    } else if ((sent + failed) % CLOCK_CHECK_EVERY == 0 && now_ns(CLOCK_MONOTONIC) >= end) {
      break;
    }
    // A full device queue (ENOBUFS) loses this datagram before any sampling point: counted, not retried.
    if (send(fd, payload, payload_bytes, 0) < 0) {
      if (!first_errno) first_errno = errno;
      failed++;
    } else {
      sent++;
    }
  }
  const uint64_t last_wall = now_ns(CLOCK_REALTIME);
  const double elapsed = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
  close(fd);
  printf("{\"sent\":%llu,\"failed\":%llu,\"seconds\":%.6f,\"rate\":%.0f,\"firstNs\":\"%llu\",\"lastNs\":\"%llu\"",
         (unsigned long long)sent, (unsigned long long)failed, elapsed, elapsed > 0 ? (double)sent / elapsed : 0,
         (unsigned long long)first_wall, (unsigned long long)last_wall);
  if (failed) printf(",\"firstError\":\"%s\"", strerror(first_errno));
  printf("}\n");
  return sent ? 0 : 1;
}
