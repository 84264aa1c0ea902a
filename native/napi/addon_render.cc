// LineRenderer: renders the lines of a whole batch in one format, JSON or text
// (native/render/sample_lines.h), into the caller's output buffer in one call, with the OVN decoder's
// events from a table JavaScript fills on demand. A batch whose cookies are all in the table
// costs one call; each cookie seen for the first time costs one more (JavaScript describes it,
// sets its event and renders on). One instance renders one format: its events are in that
// format's bytes.
#include "napi/addon_render.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "napi/arguments.h"
#include "render/sample_lines.h"

namespace ovnpsample {

namespace {

// render()'s flags.
constexpr uint32_t kLittleEndianFlag = 1;
constexpr uint32_t kSamplesOnlyFlag = 2;
constexpr uint32_t kWithEventsFlag = 4;
// render()'s state: where the walk is and what it wrote.
constexpr uint32_t kStateNextIndex = 0;
constexpr uint32_t kStateNextOffset = 1;
constexpr uint32_t kStateLines = 2;
constexpr uint32_t kStateOutEnd = 3;
constexpr uint32_t kStateNeeded = 4;
constexpr uint32_t kStateLength = 5;

[[noreturn]] void throw_usage(Napi::Env env, const char* usage) { ovnpsample::throw_usage(env, "LineRenderer", usage); }

// A whole number from 0 to `max`, or the usage.
double whole(const Napi::Value& value, double max, Napi::Env env, const char* usage) {
  if (!value.IsNumber()) throw_usage(env, usage);
  const double d = value.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= max) || std::floor(d) != d) throw_usage(env, usage);
  return d;
}

uint32_t u32(const Napi::Value& value, Napi::Env env, const char* usage) {
  return static_cast<uint32_t>(whole(value, std::numeric_limits<uint32_t>::max(), env, usage));
}

std::string_view bytes_of(const Napi::Value& value, Napi::Env env, const char* usage) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw_usage(env, usage);
  const Napi::Uint8Array bytes = value.As<Napi::Uint8Array>();
  return {reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength()};
}

Napi::ArrayBuffer batch_of(const Napi::Value& value, Napi::Env env, const char* usage) {
  if (!value.IsArrayBuffer()) throw_usage(env, usage);
  return value.As<Napi::ArrayBuffer>();
}

LineFormat format_of(const Napi::CallbackInfo& info) {
  const char* usage = "constructor(format: 'json' | 'text')";
  if (!info[0].IsString()) throw_usage(info.Env(), usage);
  const std::string format = info[0].As<Napi::String>().Utf8Value();
  if (format == "json") return LineFormat::kJson;
  if (format == "text") return LineFormat::kText;
  throw_usage(info.Env(), usage);
}

class LineRendererWrap : public Napi::ObjectWrap<LineRendererWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    // The numbers render() speaks in, defined here once: JavaScript reads them off the class.
    Napi::Object stop = Napi::Object::New(env);
    stop.Set("end", static_cast<uint32_t>(RenderStop::kEnd));
    stop.Set("missingEvent", static_cast<uint32_t>(RenderStop::kMissingEvent));
    stop.Set("lineLimit", static_cast<uint32_t>(RenderStop::kLineLimit));
    stop.Set("noRoom", static_cast<uint32_t>(RenderStop::kNoRoom));
    stop.Set("malformed", static_cast<uint32_t>(RenderStop::kMalformed));
    Napi::Object flag = Napi::Object::New(env);
    flag.Set("littleEndian", kLittleEndianFlag);
    flag.Set("samplesOnly", kSamplesOnlyFlag);
    flag.Set("withEvents", kWithEventsFlag);
    Napi::Object state = Napi::Object::New(env);
    state.Set("nextIndex", kStateNextIndex);
    state.Set("nextOffset", kStateNextOffset);
    state.Set("lines", kStateLines);
    state.Set("outEnd", kStateOutEnd);
    state.Set("needed", kStateNeeded);
    state.Set("length", kStateLength);
    return DefineClass(
        env, "LineRenderer",
        {StaticValue("stop", stop), StaticValue("flag", flag), StaticValue("state", state),
         InstanceMethod("setEvent", &LineRendererWrap::SetEvent),
         InstanceMethod("setEventForCookieLength", &LineRendererWrap::SetEventForCookieLength),
         InstanceMethod("clearEvents", &LineRendererWrap::ClearEvents),
         InstanceMethod("render", &LineRendererWrap::Render), InstanceMethod("line", &LineRendererWrap::Line)});
  }

  // new LineRenderer(format: 'json' | 'text')
  explicit LineRendererWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<LineRendererWrap>(info), renderer_(format_of(info)) {}

 private:
  // setEvent(obsDomainId, obsPointId, bytes: Uint8Array): the event of the samples with this
  // 8-byte cookie, as the format writes it (JSON: the event object; text: ` | message`).
  void SetEvent(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "setEvent(obsDomainId: u32, obsPointId: u32, bytes: Uint8Array)";
    const uint32_t domain = u32(info[0], env, usage);
    const uint32_t point = u32(info[1], env, usage);
    renderer_.events().set(domain, point, bytes_of(info[2], env, usage));
  }

  // setEventForCookieLength(cookieLength, bytes: Uint8Array): the event of the samples whose
  // cookie is not an OVS cookie and has this many bytes (0: none).
  void SetEventForCookieLength(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "setEventForCookieLength(cookieLength: u32, bytes: Uint8Array)";
    const uint32_t length = u32(info[0], env, usage);
    renderer_.events().set_for_cookie_length(length, bytes_of(info[1], env, usage));
  }

  void ClearEvents(const Napi::CallbackInfo&) { renderer_.events().clear(); }

  // render(batch: ArrayBuffer, count, fromIndex, fromOffset, flags, maxLines, out: Uint8Array,
  //        outAt, state: Float64Array(5)) -> RenderStop
  // Writes the lines from record `fromIndex` (at byte `fromOffset`) into out[outAt, …); state
  // gets the next record's index and offset, the lines written, the end of what was written
  // in `out` and, when out of room, the bytes the next line needs.
  Napi::Value Render(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage =
        "render(batch: ArrayBuffer, count, fromIndex, fromOffset, flags, maxLines, out: Uint8Array, outAt, "
        "state: Float64Array(5))";
    Napi::ArrayBuffer batch = batch_of(info[0], env, usage);
    RenderRequest request;
    request.batch = static_cast<const uint8_t*>(batch.Data());
    request.batch_size = batch.ByteLength();
    request.count = u32(info[1], env, usage);
    RenderCursor from;
    from.index = u32(info[2], env, usage);
    from.offset = static_cast<size_t>(whole(info[3], static_cast<double>(request.batch_size), env, usage));
    const uint32_t flags = u32(info[4], env, usage);
    request.little_endian = (flags & kLittleEndianFlag) != 0;
    request.samples_only = (flags & kSamplesOnlyFlag) != 0;
    request.with_events = (flags & kWithEventsFlag) != 0;
    if (!info[5].IsNumber()) throw_usage(env, usage);
    const double max_lines = info[5].As<Napi::Number>().DoubleValue();
    if (!(max_lines >= 0)) throw_usage(env, usage);
    request.max_lines = max_lines >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(max_lines);
    if (!info[6].IsTypedArray() || info[6].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw_usage(env, usage);
    Napi::Uint8Array out = info[6].As<Napi::Uint8Array>();
    const auto out_at = static_cast<size_t>(whole(info[7], static_cast<double>(out.ByteLength()), env, usage));
    if (!info[8].IsTypedArray() || info[8].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[8].As<Napi::Float64Array>().ElementLength() != kStateLength)
      throw_usage(env, usage);
    Napi::Float64Array state = info[8].As<Napi::Float64Array>();

    const RenderResult result = renderer_.render(request, from, out.Data() + out_at, out.ByteLength() - out_at);
    state[kStateNextIndex] = result.next.index;
    state[kStateNextOffset] = static_cast<double>(result.next.offset);
    state[kStateLines] = result.lines;
    state[kStateOutEnd] = static_cast<double>(out_at + result.written);
    state[kStateNeeded] = static_cast<double>(result.needed);
    return Napi::Number::New(env, static_cast<double>(result.stop));
  }

  // line(batch: ArrayBuffer, offset, littleEndian: boolean, event?: Uint8Array) -> string
  // The line of the record at `offset` (no '\n'); a RangeError when the record lies.
  Napi::Value Line(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "line(batch: ArrayBuffer, offset, littleEndian: boolean, event?: Uint8Array)";
    Napi::ArrayBuffer batch = batch_of(info[0], env, usage);
    const auto offset = static_cast<size_t>(whole(info[1], static_cast<double>(batch.ByteLength()), env, usage));
    if (!info[2].IsBoolean()) throw_usage(env, usage);
    std::string_view event;
    const bool with_event = !info[3].IsUndefined();
    if (with_event) event = bytes_of(info[3], env, usage);
    line_.clear();
    if (!renderer_.append_line(static_cast<const uint8_t*>(batch.Data()), batch.ByteLength(), offset,
                               info[2].As<Napi::Boolean>().Value(), with_event ? &event : nullptr, line_))
      throw Napi::RangeError::New(env, "the batch record at " + std::to_string(offset) + " reaches outside its batch");
    return Napi::String::New(env, line_);
  }

  SampleLineRenderer renderer_;
  std::string line_;
};

}  // namespace

Napi::Function define_line_renderer(Napi::Env env) { return LineRendererWrap::Define(env); }

}  // namespace ovnpsample
