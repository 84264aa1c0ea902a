// The lab benchmark's reference consumer: the least a C program does to show psample samples the
// way libpsample's `psample` CLI does, one recv() per sample and one printed line per sample.
// Written from the kernel's psample and generic netlink UAPI.
//
//   psample-print [--group N] [--rcvbuf BYTES] [--pad BYTES]
//                                                 print every sample (of group N) until SIGTERM/SIGINT;
//                                                 --pad adds BYTES of filler to each line, so the reader
//                                                 writes as much as a richer consumer's lines do
//   psample-print --groups                        print each psample group: "group N seq S refcount R"
//
// The receive buffer is ovn-psample's default (32 MiB, SO_RCVBUFFORCE) with NETLINK_NO_ENOBUFS, as
// ovn-psample sets them, so a comparison of losses compares readers and not buffer sizes. stdout is
// a file in the benchmark, so stdio buffers it; the buffer is flushed whenever the socket is empty,
// which keeps "time to the last line printed" honest without a write() per sample.
// On stderr: "psample-print: listening (...)" once joined, and at exit
// "psample-print: N shown; received=N kernelDrops=N" (the socket's SK_MEMINFO_DROPS).
#define _GNU_SOURCE
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

// include/uapi/linux/psample.h; bookworm's copy predates PROTO's neighbours (USER_COOKIE, 6.11).
enum {
  PSAMPLE_ATTR_IIFINDEX = 0,
  PSAMPLE_ATTR_OIFINDEX = 1,
  PSAMPLE_ATTR_ORIGSIZE = 2,
  PSAMPLE_ATTR_SAMPLE_GROUP = 3,
  PSAMPLE_ATTR_GROUP_SEQ = 4,
  PSAMPLE_ATTR_SAMPLE_RATE = 5,
  PSAMPLE_ATTR_DATA = 6,
  PSAMPLE_ATTR_GROUP_REFCOUNT = 7,
  PSAMPLE_ATTR_PROTO = 14,
  PSAMPLE_ATTR_USER_COOKIE = 15,
  PSAMPLE_ATTR_COUNT = 17,
};
enum { PSAMPLE_CMD_SAMPLE = 0, PSAMPLE_CMD_GET_GROUP = 1 };
#define PSAMPLE_FAMILY_NAME "psample"
#define PSAMPLE_SAMPLE_GROUP_NAME "packets"

enum { DEFAULT_RCVBUF = 32 * 1024 * 1024, MAX_COOKIE_BYTES = 64, MAX_PAD_BYTES = 8192 };
// A stop request that lands just before a blocking recv() is seen within this time.
enum { STOP_CHECK_MS = 200 };

static volatile sig_atomic_t stopping;
static void request_stop(int signal_number) {
  (void)signal_number;
  stopping = 1;
}

static void die(const char* what) {
  fprintf(stderr, "psample-print: %s: %s\n", what, strerror(errno));
  exit(1);
}

static unsigned long parse_number(const char* text, const char* name) {
  char* end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 0);
  if (errno || *end || end == text) {
    fprintf(stderr, "psample-print: %s must be a number, got '%s'\n", name, text);
    exit(2);
  }
  return value;
}

// Attributes of one message, indexed by type; a type seen twice keeps the last.
struct attrs {
  const struct nlattr* by_type[PSAMPLE_ATTR_COUNT];
};

static void parse_attrs(const void* start, size_t length, struct attrs* out, int max_type) {
  memset(out, 0, sizeof *out);
  const uint8_t* p = start;
  const uint8_t* end = p + length;
  while (p + NLA_HDRLEN <= end) {
    const struct nlattr* a = (const struct nlattr*)p;
    if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end) return;
    int type = a->nla_type & NLA_TYPE_MASK;
    if (type < max_type) out->by_type[type] = a;
    p += NLA_ALIGN(a->nla_len);
  }
}

static const void* payload(const struct nlattr* a) { return (const uint8_t*)a + NLA_HDRLEN; }
static size_t payload_length(const struct nlattr* a) { return a->nla_len - NLA_HDRLEN; }

static uint32_t u32_or_zero(const struct nlattr* a) {
  uint32_t v = 0;
  if (a && payload_length(a) >= 4) memcpy(&v, payload(a), 4);
  return v;
}

static uint16_t u16_or_zero(const struct nlattr* a) {
  uint16_t v = 0;
  if (a && payload_length(a) >= 2) memcpy(&v, payload(a), 2);
  return v;
}

static void put_attr(uint8_t* message, uint16_t type, const void* value, uint16_t length) {
  struct nlmsghdr* header = (struct nlmsghdr*)message;
  struct nlattr* a = (struct nlattr*)(message + NLMSG_ALIGN(header->nlmsg_len));
  a->nla_type = type;
  a->nla_len = (uint16_t)(NLA_HDRLEN + length);
  memcpy((uint8_t*)a + NLA_HDRLEN, value, length);
  header->nlmsg_len = NLMSG_ALIGN(header->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static int genl_socket(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (fd < 0) die("socket(NETLINK_GENERIC)");
  struct sockaddr_nl local = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr*)&local, sizeof local) < 0) die("bind");
  return fd;
}

// Sends a generic netlink request to the kernel (port 0).
static void genl_request(int fd, uint16_t family, uint8_t command, uint16_t flags, uint16_t attr_type,
                         const void* attr_value, uint16_t attr_length) {
  uint8_t message[256] = {0};
  struct nlmsghdr* header = (struct nlmsghdr*)message;
  header->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
  header->nlmsg_type = family;
  header->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
  header->nlmsg_seq = 1;
  struct genlmsghdr* genl = (struct genlmsghdr*)(message + NLMSG_HDRLEN);
  genl->cmd = command;
  genl->version = 1;
  if (attr_value) put_attr(message, attr_type, attr_value, attr_length);
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(fd, message, header->nlmsg_len, 0, (struct sockaddr*)&kernel, sizeof kernel) < 0) die("sendto");
}

struct family {
  uint16_t id;
  uint32_t packets_group;
};

// CTRL_CMD_GETFAMILY "psample": the family id and the id of its "packets" multicast group.
static struct family resolve_psample(int fd) {
  genl_request(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, CTRL_ATTR_FAMILY_NAME, PSAMPLE_FAMILY_NAME,
               sizeof PSAMPLE_FAMILY_NAME);
  static uint8_t buffer[16384];
  ssize_t n = recv(fd, buffer, sizeof buffer, 0);
  if (n < 0) die("recv(CTRL_CMD_GETFAMILY)");
  struct family found = {0};
  const struct nlmsghdr* header = (const struct nlmsghdr*)buffer;
  if (!NLMSG_OK(header, (size_t)n) || header->nlmsg_type == NLMSG_ERROR) {
    fprintf(stderr, "psample-print: psample family not found: load the psample module (kernel >= 4.11)\n");
    exit(1);
  }
  const uint8_t* attrs = (const uint8_t*)NLMSG_DATA(header) + GENL_HDRLEN;
  const uint8_t* end = (const uint8_t*)header + header->nlmsg_len;
  while (attrs + NLA_HDRLEN <= end) {
    const struct nlattr* a = (const struct nlattr*)attrs;
    if (a->nla_len < NLA_HDRLEN || attrs + a->nla_len > end) break;
    int type = a->nla_type & NLA_TYPE_MASK;
    if (type == CTRL_ATTR_FAMILY_ID) found.id = u16_or_zero(a);
    if (type == CTRL_ATTR_MCAST_GROUPS) {
      // A nest of nests, each holding one group's name and id.
      const uint8_t* g = payload(a);
      const uint8_t* groups_end = attrs + a->nla_len;
      while (g + NLA_HDRLEN <= groups_end) {
        const struct nlattr* group = (const struct nlattr*)g;
        if (group->nla_len < NLA_HDRLEN || g + group->nla_len > groups_end) break;
        const struct nlattr* name = NULL;
        const struct nlattr* id = NULL;
        const uint8_t* f = payload(group);
        const uint8_t* fields_end = g + group->nla_len;
        while (f + NLA_HDRLEN <= fields_end) {
          const struct nlattr* field = (const struct nlattr*)f;
          if (field->nla_len < NLA_HDRLEN || f + field->nla_len > fields_end) break;
          if ((field->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_NAME) name = field;
          if ((field->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_ID) id = field;
          f += NLA_ALIGN(field->nla_len);
        }
        if (name && id && !strncmp(payload(name), PSAMPLE_SAMPLE_GROUP_NAME, payload_length(name))) {
          found.packets_group = u32_or_zero(id);
        }
        g += NLA_ALIGN(group->nla_len);
      }
    }
    attrs += NLA_ALIGN(a->nla_len);
  }
  if (!found.id || !found.packets_group) {
    fprintf(stderr, "psample-print: the psample family has no '%s' multicast group\n", PSAMPLE_SAMPLE_GROUP_NAME);
    exit(1);
  }
  return found;
}

// PSAMPLE_CMD_GET_GROUP dump: every group's GROUP_SEQ, the number of samples it has sent.
static int print_groups(void) {
  int fd = genl_socket();
  struct family psample = resolve_psample(fd);
  genl_request(fd, psample.id, PSAMPLE_CMD_GET_GROUP, NLM_F_DUMP, 0, NULL, 0);
  static uint8_t buffer[65536];
  for (;;) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) die("recv(PSAMPLE_CMD_GET_GROUP)");
    size_t remaining = (size_t)n;
    for (const struct nlmsghdr* h = (const struct nlmsghdr*)buffer; NLMSG_OK(h, remaining);
         h = NLMSG_NEXT(h, remaining)) {
      if (h->nlmsg_type == NLMSG_DONE) return 0;
      if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr* error = NLMSG_DATA(h);
        errno = -error->error;
        die("PSAMPLE_CMD_GET_GROUP");
      }
      struct attrs a;
      parse_attrs((const uint8_t*)NLMSG_DATA(h) + GENL_HDRLEN, h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, &a,
                  PSAMPLE_ATTR_COUNT);
      printf("group %u seq %u refcount %u\n", u32_or_zero(a.by_type[PSAMPLE_ATTR_SAMPLE_GROUP]),
             u32_or_zero(a.by_type[PSAMPLE_ATTR_GROUP_SEQ]), u32_or_zero(a.by_type[PSAMPLE_ATTR_GROUP_REFCOUNT]));
    }
  }
}

static unsigned long pad_bytes;

static void print_sample(const struct attrs* a) {
  char cookie[2 * MAX_COOKIE_BYTES + 1] = "-";
  const struct nlattr* c = a->by_type[PSAMPLE_ATTR_USER_COOKIE];
  if (c) {
    static const char digits[] = "0123456789abcdef";
    size_t length = payload_length(c) < MAX_COOKIE_BYTES ? payload_length(c) : MAX_COOKIE_BYTES;
    const uint8_t* bytes = payload(c);
    for (size_t i = 0; i < length; i++) {
      cookie[2 * i] = digits[bytes[i] >> 4];
      cookie[2 * i + 1] = digits[bytes[i] & 15];
    }
    cookie[2 * length] = '\0';
  }
  const struct nlattr* data = a->by_type[PSAMPLE_ATTR_DATA];
  printf("group %u seq %u in %u out %u origsize %u rate %u proto 0x%04x data %zu cookie %s",
         u32_or_zero(a->by_type[PSAMPLE_ATTR_SAMPLE_GROUP]), u32_or_zero(a->by_type[PSAMPLE_ATTR_GROUP_SEQ]),
         u16_or_zero(a->by_type[PSAMPLE_ATTR_IIFINDEX]), u16_or_zero(a->by_type[PSAMPLE_ATTR_OIFINDEX]),
         u32_or_zero(a->by_type[PSAMPLE_ATTR_ORIGSIZE]), u32_or_zero(a->by_type[PSAMPLE_ATTR_SAMPLE_RATE]),
         u16_or_zero(a->by_type[PSAMPLE_ATTR_PROTO]), data ? payload_length(data) : 0, cookie);
  static char filler[MAX_PAD_BYTES];
  if (pad_bytes == 0) {
    putchar('\n');
    return;
  }
  if (filler[0] == '\0') memset(filler, '.', sizeof filler);
  printf(" %.*s\n", (int)pad_bytes, filler);
}

int main(int argc, char** argv) {
  long group = -1;
  unsigned long rcvbuf = DEFAULT_RCVBUF;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--groups")) return print_groups();
    if (i + 1 >= argc) {
      fprintf(stderr, "psample-print: %s needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--group"))
      group = (long)parse_number(argv[++i], "--group");
    else if (!strcmp(argv[i], "--rcvbuf"))
      rcvbuf = parse_number(argv[++i], "--rcvbuf");
    else if (!strcmp(argv[i], "--pad"))
      pad_bytes = parse_number(argv[++i], "--pad");
    else {
      fprintf(stderr, "usage: psample-print [--group N] [--rcvbuf BYTES] [--pad BYTES] | psample-print --groups\n");
      return 2;
    }
  }
  if (pad_bytes > MAX_PAD_BYTES) {
    fprintf(stderr, "psample-print: --pad must be 0..%d\n", MAX_PAD_BYTES);
    return 2;
  }
  if (rcvbuf == 0 || rcvbuf > INT32_MAX) {
    fprintf(stderr, "psample-print: --rcvbuf must be 1..%d\n", INT32_MAX);
    return 2;
  }

  int fd = genl_socket();
  struct family psample = resolve_psample(fd);
  int size = (int)rcvbuf;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0 &&
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) < 0) {
    die("SO_RCVBUF");
  }
  int on = 1;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on) < 0) die("NETLINK_NO_ENOBUFS");
  int membership = (int)psample.packets_group;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &membership, sizeof membership) < 0) {
    die("joining psample's packets group (CAP_NET_ADMIN needed)");
  }
  struct timeval stop_check = {.tv_sec = 0, .tv_usec = STOP_CHECK_MS * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &stop_check, sizeof stop_check);
  // No SA_RESTART: a blocked recv() returns EINTR, so a stop request ends the loop at once.
  struct sigaction stop = {.sa_handler = request_stop};
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGINT, &stop, NULL);
  fprintf(stderr, "psample-print: listening (netlink family %u, multicast group %u)\n", psample.id,
          psample.packets_group);

  static uint8_t buffer[1 << 16];
  unsigned long long received = 0, shown = 0;
  while (!stopping) {
    ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) {
      fflush(stdout);
      n = recv(fd, buffer, sizeof buffer, 0);
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      die("recv");
    }
    size_t remaining = (size_t)n;
    for (const struct nlmsghdr* h = (const struct nlmsghdr*)buffer; NLMSG_OK(h, remaining);
         h = NLMSG_NEXT(h, remaining)) {
      if (h->nlmsg_type != psample.id || h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) continue;
      const struct genlmsghdr* genl = NLMSG_DATA(h);
      if (genl->cmd != PSAMPLE_CMD_SAMPLE) continue;
      received++;
      struct attrs a;
      parse_attrs((const uint8_t*)genl + GENL_HDRLEN, h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, &a,
                  PSAMPLE_ATTR_COUNT);
      if (group >= 0 && u32_or_zero(a.by_type[PSAMPLE_ATTR_SAMPLE_GROUP]) != (uint32_t)group) continue;
      print_sample(&a);
      shown++;
    }
  }
  fflush(stdout);
  uint32_t meminfo[SK_MEMINFO_VARS] = {0};
  socklen_t length = sizeof meminfo;
  getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &length);
  fprintf(stderr, "psample-print: %llu shown; received=%llu kernelDrops=%u\n", shown, received,
          meminfo[SK_MEMINFO_DROPS]);
  return 0;
}
