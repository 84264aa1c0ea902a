// EventJsonWriter: writes watch's JSON line of one packet (render/event_json.h) into the
// caller's output buffer in one call. The line's numbers come in a Float64Array whose slots are
// defined here once (JavaScript reads them off the class); its database parts are pieces set
// once each by id. The sample's numbers, cookie and bytes are read from its batch record when the
// event came from a batch (no object made for them), else taken from the slots and arguments.
#include "napi/addon_event_json.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "packet/packet_fields.h"
#include "render/event_json.h"
#include "render/line_out.h"
#include "wire/batch_layout.h"
#include "wire/batch_record.h"
#include "wire/psample_parser.h"

// X(identifier, JavaScript name, slot) of write()'s numbers. -1 marks an absent piece, oifindex,
// record or packet.
#define OVNPSAMPLE_EVENT_JSON_SLOTS(X)                                                                                \
  X(kOutAt, outAt, 0)               /* where the line goes in `out` */                                                \
  X(kRecord, record, 1)             /* the first sample's record offset in `bytes` (a batch), or -1: the slots say */ \
  X(kLittleEndian, littleEndian, 2) /* the record's byte order */                                                     \
  X(kTimeHigh, timeHigh, 3)         /* the time in ns since the epoch, high and low 32 bits, */                       \
  X(kTimeLow, timeLow, 4)           /* unless kTimeFromRecord */                                                      \
  X(kTimeFromRecord, timeFromRecord, 5)                                                                               \
  X(kGroup, group, 6)                                                                                                 \
  X(kIifindex, iifindex, 7)                                                                                           \
  X(kOifindex, oifindex, 8)                                                                                           \
  X(kHasNsid, hasNsid, 9)                                                                                             \
  X(kNsid, nsid, 10)                                                                                                  \
  X(kOrigSize, origSize, 11)                                                                                          \
  X(kRate, rate, 12)                                                                                                  \
  X(kProbability, probability, 13)                                                                                    \
  X(kSamples, samples, 14)                                                                                            \
  X(kHead, head, 15) /* pieces */                                                                                     \
  X(kSteps, steps, 16)                                                                                                \
  X(kSrc, src, 17)                                                                                                    \
  X(kDst, dst, 18)                                                                                                    \
  X(kInterface, interface, 19)                                                                                        \
  X(kDatapath, datapath, 20)                                                                                          \
  X(kSlot, slot, 21) /* the packet's slot in `words`, or -1: no packet */

namespace ovnpsample {

namespace {

#define OVNPSAMPLE_EVENT_JSON_SLOT(id, name, index) constexpr uint32_t id = index;
OVNPSAMPLE_EVENT_JSON_SLOTS(OVNPSAMPLE_EVENT_JSON_SLOT)
#undef OVNPSAMPLE_EVENT_JSON_SLOT
// NOLINTNEXTLINE(bugprone-macro-parentheses): each slot adds "+1" to the sum below; parentheses would end it.
#define OVNPSAMPLE_EVENT_JSON_COUNT(id, name, index) +1
constexpr uint32_t kSlotCount = 0 OVNPSAMPLE_EVENT_JSON_SLOTS(OVNPSAMPLE_EVENT_JSON_COUNT);
#undef OVNPSAMPLE_EVENT_JSON_COUNT

template <typename T>
bool typed(napi_env env, napi_value value, napi_typedarray_type want, T*& data, size_t& length) {
  napi_typedarray_type type = napi_int8_array;
  void* at = nullptr;
  return napi_get_typedarray_info(env, value, &type, &length, &at, nullptr, nullptr) == napi_ok && type == want &&
         (data = static_cast<T*>(at), true);
}

bool whole(double value, double max) { return value >= 0 && value <= max && std::floor(value) == value; }

[[noreturn]] void throw_usage(Napi::Env env, const std::string& text) {
  Napi::Error e = Napi::TypeError::New(env, "EventJsonWriter." + text);
  e.Set("code", Napi::String::New(env, "INVALID_OPTION"));
  throw e;
}

constexpr const char* kWriteUsage =
    "write(out: Uint8Array, numbers: Float64Array, words?: Uint32Array, bytes?: Uint8Array, cookie?: Uint8Array)";

class EventJsonWriterWrap : public Napi::ObjectWrap<EventJsonWriterWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    Napi::Object slot = Napi::Object::New(env);
#define OVNPSAMPLE_EVENT_JSON_SLOT(id, name, index) slot.Set(#name, id);
    OVNPSAMPLE_EVENT_JSON_SLOTS(OVNPSAMPLE_EVENT_JSON_SLOT)
#undef OVNPSAMPLE_EVENT_JSON_SLOT
    return DefineClass(env, "EventJsonWriter",
                       {StaticValue("slot", slot), StaticValue("slots", Napi::Number::New(env, kSlotCount)),
                        StaticValue("version", Napi::Number::New(env, kEventJsonVersion)),
                        StaticValue("maxPieces", Napi::Number::New(env, PieceTable::kMaxPieces)),
                        InstanceMethod("setPiece", &EventJsonWriterWrap::SetPiece),
                        InstanceMethod("clearPieces", &EventJsonWriterWrap::ClearPieces),
                        InstanceMethod("write", &EventJsonWriterWrap::Write)});
  }

  explicit EventJsonWriterWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EventJsonWriterWrap>(info) {}

 private:
  // setPiece(id, bytes: Uint8Array)
  void SetPiece(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "setPiece(id: number below maxPieces, bytes: Uint8Array)";
    if (!info[0].IsNumber() || !info[1].IsTypedArray() ||
        info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw_usage(env, usage);
    const double id = info[0].As<Napi::Number>().DoubleValue();
    const Napi::Uint8Array bytes = info[1].As<Napi::Uint8Array>();
    if (!whole(id, PieceTable::kMaxPieces - 1) ||
        !pieces_.set(static_cast<uint32_t>(id),
                     std::string_view(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength())))
      throw_usage(env, usage);
  }

  void ClearPieces(const Napi::CallbackInfo&) { pieces_.clear(); }

  // A piece the slot names: null for -1, the usage for one never set.
  const std::string* piece(Napi::Env env, double id) {
    if (id == -1) return nullptr;
    if (!whole(id, PieceTable::kMaxPieces - 1))
      throw_usage(env, std::string(kWriteUsage) + ": a piece id is out of range");
    const std::string* found = pieces_.find(static_cast<uint32_t>(id));
    if (found == nullptr)
      throw_usage(env,
                  std::string(kWriteUsage) + ": piece " + std::to_string(static_cast<uint32_t>(id)) + " is not set");
    return found;
  }

  // write(out, numbers, words?, bytes?, cookie?) -> where the line ends in `out`, or minus the
  // bytes it needs when it does not fit (the bytes after outAt are then scratch, not a line).
  Napi::Value Write(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    napi_env raw = env;
    uint8_t* out = nullptr;
    size_t out_length = 0;
    double* n = nullptr;
    size_t n_length = 0;
    if (!typed(raw, info[0], napi_uint8_array, out, out_length) ||
        !typed(raw, info[1], napi_float64_array, n, n_length) || n_length != kSlotCount ||
        !whole(n[kOutAt], static_cast<double>(out_length)))
      throw_usage(env, kWriteUsage);

    EventJsonLine line;
    const std::string* head = piece(env, n[kHead]);
    const std::string* steps = piece(env, n[kSteps]);
    if (head == nullptr || steps == nullptr) throw_usage(env, kWriteUsage);
    line.head = *head;
    line.steps = *steps;
    line.src = piece(env, n[kSrc]);
    line.dst = piece(env, n[kDst]);
    line.interface = piece(env, n[kInterface]);
    line.datapath = piece(env, n[kDatapath]);
    if (!whole(n[kSamples], 0x1p53)) throw_usage(env, kWriteUsage);
    line.samples = static_cast<uint64_t>(n[kSamples]);

    const uint8_t* bytes = nullptr;
    size_t bytes_length = 0;
    const bool with_bytes = !info[3].IsUndefined();
    if (with_bytes && !typed(raw, info[3], napi_uint8_array, bytes, bytes_length)) throw_usage(env, kWriteUsage);
    const uint8_t* data = bytes;
    size_t data_length = bytes_length;
    if (n[kRecord] != -1) {
      // The first sample's record in its batch.
      Record r;
      if (!with_bytes || !whole(n[kRecord], static_cast<double>(bytes_length))) throw_usage(env, kWriteUsage);
      const Batch b{bytes, bytes_length, (n[kLittleEndian] != 0) != layout::kLittleEndian};
      const auto at = static_cast<size_t>(n[kRecord]);
      if (!read_record(b, at, r))
        throw Napi::RangeError::New(env, "the batch record at " + std::to_string(at) + " reaches outside its batch");
      event_json_line_from_record(b, r, line);
      data = r.data;
      data_length = r.data_length;
    } else {
      if (!whole(n[kGroup], 0xffffffff) || !whole(n[kIifindex], 0xffffffff) || !whole(n[kOrigSize], 0xffffffff) ||
          !whole(n[kRate], 0xffffffff) || !(n[kOifindex] == -1 || whole(n[kOifindex], 0xffffffff)) ||
          !(n[kNsid] >= INT32_MIN && n[kNsid] <= INT32_MAX && std::floor(n[kNsid]) == n[kNsid]))
        throw_usage(env, kWriteUsage);
      line.group = static_cast<uint32_t>(n[kGroup]);
      line.iifindex = static_cast<uint32_t>(n[kIifindex]);
      line.has_oifindex = n[kOifindex] != -1;
      line.oifindex = line.has_oifindex ? static_cast<uint32_t>(n[kOifindex]) : 0;
      line.has_nsid = n[kHasNsid] != 0;
      line.nsid = static_cast<int32_t>(n[kNsid]);
      line.orig_size = static_cast<uint32_t>(n[kOrigSize]);
      line.rate = static_cast<uint32_t>(n[kRate]);
      line.probability = n[kProbability] != 0;
      if (!info[4].IsUndefined()) {
        uint8_t* cookie = nullptr;
        if (!typed(raw, info[4], napi_uint8_array, cookie, line.cookie_length)) throw_usage(env, kWriteUsage);
        line.has_cookie = true;
        line.cookie = cookie;
      }
    }
    if (n[kRecord] == -1 || n[kTimeFromRecord] == 0) {
      if (!whole(n[kTimeHigh], 0xffffffff) || !whole(n[kTimeLow], 0xffffffff)) throw_usage(env, kWriteUsage);
      line.timestamp_ns = static_cast<uint64_t>(n[kTimeHigh]) << 32 | static_cast<uint64_t>(n[kTimeLow]);
    }

    DecodedPacket packet;
    if (n[kSlot] != -1) {
      uint32_t* words = nullptr;
      size_t words_length = 0;
      if (!typed(raw, info[2], napi_uint32_array, words, words_length) || !whole(n[kSlot], 0xffffffff) ||
          (static_cast<size_t>(n[kSlot]) + 1) * packet_fields::kWords > words_length ||
          (data == nullptr && data_length > 0))
        throw_usage(env, kWriteUsage);
      packet = load_fields(words + static_cast<size_t>(n[kSlot]) * packet_fields::kWords, data, data_length);
      line.packet = &packet;
    }

    const auto at = static_cast<size_t>(n[kOutAt]);
    LineOut written(out + at, out + out_length);
    append_event_json(written, line, packet_json_);
    if (!written.overflowed()) return Napi::Number::New(env, static_cast<double>(at + written.size()));
    // Rare (once per chunk): the line is written again, whole, to know its length.
    line_.clear();
    append_event_json(line_, line, packet_json_);
    return Napi::Number::New(env, -static_cast<double>(line_.size()));
  }

  PieceTable pieces_;
  std::string packet_json_;
  std::string line_;
};

}  // namespace

Napi::Function define_event_json_writer(Napi::Env env) { return EventJsonWriterWrap::Define(env); }

}  // namespace ovnpsample
