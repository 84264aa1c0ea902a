// IPFIX as Open vSwitch sends it, for the flood test and the IPFIX benchmark: one template
// message (template 300: observationPointId, IPv4 addresses, protocol, ports, packetDeltaCount,
// interfaceName), then one data record per message with the sequence numbers an exporter gives
// them, paced to a rate or as fast as possible.
//
//   ipfix-sender --port PORT [--domain D] (--seconds S [--rate R] | --count N) [--tail-ms MS]
//
// --rate 0 (the default) sends unpaced; pacing uses absolute deadlines (start + i / rate), so a
// late wake-up is caught up and the average rate is exact. --tail-ms sends one last record that
// long after the flood, so a receiver's sequence numbers show every record lost before it.
// Prints one JSON line: records (data records sent, the tail included), template (1), seconds, rate.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long number(const char* text, const char* name) {
  char* end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 0);
  if (errno || *end || end == text) {
    fprintf(stderr, "ipfix-sender: %s must be a number, got '%s'\n", name, text);
    exit(2);
  }
  return value;
}

static size_t put16(uint8_t* at, uint16_t value) {
  at[0] = (uint8_t)(value >> 8);
  at[1] = (uint8_t)value;
  return 2;
}

static size_t put32(uint8_t* at, uint32_t value) {
  put16(at, (uint16_t)(value >> 16));
  put16(at + 2, (uint16_t)value);
  return 4;
}

static size_t header(uint8_t* msg, uint32_t sequence, uint32_t domain) {
  put16(msg, 10);
  put32(msg + 4, (uint32_t)time(NULL));
  put32(msg + 8, sequence);
  put32(msg + 12, domain);
  return 16;
}

static const uint16_t FIELDS[][2] = {{138, 4}, {8, 4}, {12, 4}, {4, 1}, {7, 2}, {11, 2}, {2, 8}, {82, 0xffff}};
enum { FIELD_COUNT = sizeof FIELDS / sizeof FIELDS[0], TEMPLATE_ID = 300 };

static size_t template_message(uint8_t* msg, uint32_t domain) {
  size_t at = header(msg, 0, domain);
  size_t set = at;
  at += 4;
  at += put16(msg + at, TEMPLATE_ID);
  at += put16(msg + at, FIELD_COUNT);
  for (size_t i = 0; i < FIELD_COUNT; i++) {
    at += put16(msg + at, FIELDS[i][0]);
    at += put16(msg + at, FIELDS[i][1]);
  }
  put16(msg + set, 2);
  put16(msg + set + 2, (uint16_t)(at - set));
  put16(msg + 2, (uint16_t)at);
  return at;
}

static size_t data_message(uint8_t* msg, uint32_t sequence, uint32_t domain) {
  size_t at = header(msg, sequence, domain);
  size_t set = at;
  at += 4;
  at += put32(msg + at, 1000 + (sequence % 64));  // observationPointId
  at += put32(msg + at, 0x0af40005);              // 10.244.0.5
  at += put32(msg + at, 0x0af40000 | (sequence & 0xff));
  msg[at++] = 6;
  at += put16(msg + at, (uint16_t)(40000 + (sequence % 1000)));
  at += put16(msg + at, 443);
  at += put32(msg + at, 0);
  at += put32(msg + at, 1);  // packetDeltaCount
  static const char name[] = "ovn-k8s-mp0";
  msg[at++] = sizeof name - 1;
  memcpy(msg + at, name, sizeof name - 1);
  at += sizeof name - 1;
  put16(msg + set, TEMPLATE_ID);
  put16(msg + set + 2, (uint16_t)(at - set));
  put16(msg + 2, (uint16_t)at);
  return at;
}

int main(int argc, char** argv) {
  unsigned long port = 0, domain = 0x2b000001, seconds = 0, rate = 0, count = 0, tail_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port"))
      port = number(argv[i + 1], "--port");
    else if (!strcmp(argv[i], "--domain"))
      domain = number(argv[i + 1], "--domain");
    else if (!strcmp(argv[i], "--seconds"))
      seconds = number(argv[i + 1], "--seconds");
    else if (!strcmp(argv[i], "--rate"))
      rate = number(argv[i + 1], "--rate");
    else if (!strcmp(argv[i], "--count"))
      count = number(argv[i + 1], "--count");
    else if (!strcmp(argv[i], "--tail-ms"))
      tail_ms = number(argv[i + 1], "--tail-ms");
    else {
      fprintf(stderr, "ipfix-sender: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (port == 0 || port > 65535 || (seconds == 0) == (count == 0)) {
    fprintf(stderr,
            "usage: ipfix-sender --port PORT [--domain D] (--seconds S [--rate R] | --count N) [--tail-ms MS]\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in to = {
      .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0 || connect(fd, (struct sockaddr*)&to, sizeof to) < 0) {
    perror("ipfix-sender: socket");
    return 1;
  }
  uint8_t msg[512];
  size_t length = template_message(msg, (uint32_t)domain);
  if (send(fd, msg, length, 0) < 0) perror("ipfix-sender: template");
  usleep(100000);
  uint32_t sequence = 0;
  uint64_t start = now_ns();
  uint64_t end = start + (uint64_t)seconds * 1000000000ull;
  for (;;) {
    if (count != 0 && sequence >= count) break;
    if (count == 0) {
      uint64_t now = now_ns();
      if (now >= end) break;
      if (rate != 0) {
        uint64_t due = start + (uint64_t)sequence * 1000000000ull / rate;
        if (due > now) {
          struct timespec pause = {.tv_sec = 0, .tv_nsec = (long)(due - now)};
          if (due - now > 200000) nanosleep(&pause, NULL);
          continue;
        }
      }
    }
    length = data_message(msg, sequence, (uint32_t)domain);
    // A failed send (a full socket buffer, an earlier datagram's ICMP error) did not leave: again.
    if (send(fd, msg, length, 0) < 0) continue;
    sequence++;
  }
  double elapsed = (double)(now_ns() - start) / 1e9;
  if (tail_ms != 0) {
    usleep((useconds_t)(tail_ms * 1000));
    length = data_message(msg, sequence, (uint32_t)domain);
    while (send(fd, msg, length, 0) < 0) {
    }
    sequence++;
  }
  printf("{\"records\":%u,\"template\":1,\"seconds\":%.3f,\"rate\":%.0f}\n", sequence, elapsed,
         (double)(sequence - (tail_ms != 0)) / elapsed);
  close(fd);
  return 0;
}
