// HumanLineWriter: writes watch's human line of one event (render/event_human.h) into the
// caller's output buffer, for the lines no native release writes (IPFIX events, psample with
// pcapng). The texts are set once by id for every event that shows them, so a line passes numbers
// only. Each writer keeps its columns' widths and texts; nothing is global, so workers each have their own.
#include "napi/addon_event_human.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "napi/arguments.h"
#include "packet/packet_decoder.h"
#include "packet/packet_fields.h"
#include "render/event_human.h"
#include "render/line_out.h"

namespace ovnpsample {

namespace {

constexpr const char* kConstructorUsage = "constructor({ color: boolean })";
constexpr const char* kSetTextsUsage =
    "setTexts(id: number below maxTexts, verdict: number, policy: string, namespace: string, sides: string, "
    "interface: string, sentence: string)";
constexpr const char* kWriteUsage =
    "write(out: Uint8Array, at: number, epochSeconds: number, nanoseconds: number, secondsOfDay: number, "
    "texts: number (an id setTexts set), words?: Uint32Array, slot?: number, data?: Uint8Array)";

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
                       {StaticValue("verdict", verdict), StaticValue("maxTexts", Napi::Number::New(env, kMaxTexts)),
                        InstanceMethod("setTexts", &HumanLineWriterWrap::SetTexts),
                        InstanceMethod("clearTexts", &HumanLineWriterWrap::ClearTexts),
                        InstanceMethod("write", &HumanLineWriterWrap::Write)});
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

  // setTexts(id, verdict, policy, namespace, sides, interface, sentence): the texts of the lines
  // that name `id`, set once for every event that shows them (texts are escaped already).
  void SetTexts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    HumanLineTexts texts;
    if (!whole(info[0], kMaxTexts - 1) || !human_line_texts(info, 1, texts)) throw_usage(env, kSetTextsUsage);
    const uint32_t id = info[0].As<Napi::Number>().Uint32Value();
    if (id >= texts_.size()) texts_.resize(id + 1);
    texts_[id] = std::move(texts);
    set_.resize(texts_.size());
    set_[id] = 1;
  }

  void ClearTexts(const Napi::CallbackInfo&) {
    texts_.clear();
    set_.clear();
  }

  // write(...) -> where the line ends in `out`, or minus the bytes it needs when it does not fit.
  Napi::Value Write(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw_usage(env, kWriteUsage);
    Napi::Uint8Array out = info[0].As<Napi::Uint8Array>();
    // Seconds up to 2^64 ns (the year 2554): what a psample or IPFIX time can say.
    if (!whole(info[1], static_cast<double>(out.ByteLength())) || !whole(info[2], kMaxSeconds) ||
        !whole(info[3], 999'999'999) || !whole(info[4], 86399) || !whole(info[5], kMaxTexts - 1))
      throw_usage(env, kWriteUsage);
    const uint32_t id = info[5].As<Napi::Number>().Uint32Value();
    if (id >= set_.size() || set_[id] == 0) throw_usage(env, std::string(kWriteUsage) + ": no texts have this id");
    const HumanTexts texts = texts_[id].view();
    const auto second = static_cast<uint64_t>(info[2].As<Napi::Number>().DoubleValue());
    const uint64_t timestamp_ns = second * 1'000'000'000 + info[3].As<Napi::Number>().Uint32Value();
    columns_.set_clock(second, info[4].As<Napi::Number>().Uint32Value());

    DecodedPacket packet;
    const bool with_packet = !info[6].IsUndefined();
    if (with_packet) {
      if (!info[6].IsTypedArray() || info[6].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
          !whole(info[7], 0xffffffff) || !info[8].IsTypedArray() ||
          info[8].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw_usage(env, kWriteUsage);
      const Napi::Uint32Array words = info[6].As<Napi::Uint32Array>();
      const Napi::Uint8Array data = info[8].As<Napi::Uint8Array>();
      const size_t slot = info[7].As<Napi::Number>().Uint32Value();
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

  static constexpr uint32_t kMaxTexts = 65'536;
  static constexpr double kMaxSeconds = 18'446'744'072;
  HumanColumns columns_;
  std::vector<HumanLineTexts> texts_;
  std::vector<uint8_t> set_;
  std::string line_;
};

}  // namespace

bool human_line_texts(const Napi::CallbackInfo& info, size_t first, HumanLineTexts& texts) {
  if (!whole(info[first], event_human::kVerdicts - 1)) return false;
  for (size_t i = first + 1; i < first + 6; i++)
    if (!info[i].IsString()) return false;
  texts.verdict = info[first].As<Napi::Number>().Uint32Value();
  texts.policy = info[first + 1].As<Napi::String>().Utf8Value();
  texts.namespace_text = info[first + 2].As<Napi::String>().Utf8Value();
  texts.sides = info[first + 3].As<Napi::String>().Utf8Value();
  texts.interface = info[first + 4].As<Napi::String>().Utf8Value();
  texts.sentence = info[first + 5].As<Napi::String>().Utf8Value();
  return true;
}

Napi::Function define_human_line_writer(Napi::Env env) { return HumanLineWriterWrap::Define(env); }

}  // namespace ovnpsample
