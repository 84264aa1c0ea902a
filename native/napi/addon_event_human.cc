// HumanLineWriter: writes watch's human line of one event (render/event_human.h) into the
// caller's output buffer, for the lines no native release writes (IPFIX events, psample with
// pcapng). Each writer keeps its columns' widths; nothing is global, so workers each have their own.
#include "napi/addon_event_human.h"

#include <cstdint>
#include <string>

#include "napi/arguments.h"
#include "packet/packet_decoder.h"
#include "packet/packet_fields.h"
#include "render/event_human.h"
#include "render/line_out.h"

namespace ovnpsample {

namespace {

constexpr const char* kConstructorUsage = "constructor({ color: boolean })";
constexpr const char* kWriteUsage =
    "write(out: Uint8Array, at: number, epochSeconds: number, nanoseconds: number, secondsOfDay: number, "
    "verdict: number, policy: string, "
    "namespace: string, sides: string, interface: string, sentence: string, words?: Uint32Array, slot?: number, "
    "data?: Uint8Array)";

[[noreturn]] void throw_usage(Napi::Env env, const std::string& usage) {
  ovnpsample::throw_usage(env, "HumanLineWriter", usage);
}

class HumanLineWriterWrap : public Napi::ObjectWrap<HumanLineWriterWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    Napi::Object verdict = Napi::Object::New(env);
#define OVNPSAMPLE_HUMAN_VERDICT(id, name, text, colour) verdict.Set(#name, static_cast<uint32_t>(event_human::id));
    OVNPSAMPLE_HUMAN_VERDICTS(OVNPSAMPLE_HUMAN_VERDICT)
#undef OVNPSAMPLE_HUMAN_VERDICT
    return DefineClass(env, "HumanLineWriter",
                       {StaticValue("verdict", verdict), InstanceMethod("write", &HumanLineWriterWrap::Write)});
  }

  explicit HumanLineWriterWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<HumanLineWriterWrap>(info), columns_(color_of(info)) {}

 private:
  static bool color_of(const Napi::CallbackInfo& info) {
    if (!info[0].IsObject()) throw_usage(info.Env(), kConstructorUsage);
    const Napi::Value color = info[0].As<Napi::Object>().Get("color");
    if (!color.IsBoolean()) throw_usage(info.Env(), kConstructorUsage);
    return color.As<Napi::Boolean>().Value();
  }

  // write(...) -> where the line ends in `out`, or minus the bytes it needs when it does not fit.
  Napi::Value Write(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw_usage(env, kWriteUsage);
    Napi::Uint8Array out = info[0].As<Napi::Uint8Array>();
    // Seconds up to 2^64 ns (the year 2554): what a psample or IPFIX time can say.
    if (!whole(info[1], static_cast<double>(out.ByteLength())) || !whole(info[2], kMaxSeconds) ||
        !whole(info[3], 999'999'999) || !whole(info[4], 86399) || !whole(info[5], event_human::kVerdicts - 1))
      throw_usage(env, kWriteUsage);
    for (size_t i = 0; i < kTexts; i++) {
      if (!info[6 + i].IsString()) throw_usage(env, kWriteUsage);
      texts_[i] = info[6 + i].As<Napi::String>().Utf8Value();
    }
    const HumanTexts texts{
        info[5].As<Napi::Number>().Uint32Value(), texts_[0], texts_[1], texts_[2], texts_[3], texts_[4]};
    const auto second = static_cast<uint64_t>(info[2].As<Napi::Number>().DoubleValue());
    const uint64_t timestamp_ns = second * 1'000'000'000 + info[3].As<Napi::Number>().Uint32Value();
    columns_.set_clock(second, info[4].As<Napi::Number>().Uint32Value());

    DecodedPacket packet;
    const bool with_packet = !info[11].IsUndefined();
    if (with_packet) {
      if (!info[11].IsTypedArray() || info[11].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
          !whole(info[12], 0xffffffff) || !info[13].IsTypedArray() ||
          info[13].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw_usage(env, kWriteUsage);
      const Napi::Uint32Array words = info[11].As<Napi::Uint32Array>();
      const Napi::Uint8Array data = info[13].As<Napi::Uint8Array>();
      const size_t slot = info[12].As<Napi::Number>().Uint32Value();
      if ((slot + 1) * packet_fields::kWords > words.ElementLength()) throw_usage(env, kWriteUsage);
      packet = load_fields(words.Data() + slot * packet_fields::kWords, data.Data(), data.ByteLength());
    }

    const size_t at = info[1].As<Napi::Number>().Uint32Value();
    LineOut written(out.Data() + at, out.Data() + out.ByteLength());
    columns_.append_line(written, timestamp_ns, texts, with_packet ? &packet : nullptr);
    if (written.overflowed()) {
      line_.clear();
      columns_.append_line(line_, timestamp_ns, texts, with_packet ? &packet : nullptr);
      return Napi::Number::New(env, -static_cast<double>(line_.size()));
    }
    return Napi::Number::New(env, static_cast<double>(at + written.size()));
  }

  static constexpr size_t kTexts = 5;
  static constexpr double kMaxSeconds = 18'446'744'072;
  HumanColumns columns_;
  std::string texts_[kTexts];
  std::string line_;
};

}  // namespace

Napi::Function define_human_line_writer(Napi::Env env) { return HumanLineWriterWrap::Define(env); }

}  // namespace ovnpsample
