// NativeWatchLines: one instance per `watch` on psample, owned by its JavaScript object (nothing
// global, so workers each have their own). Per delivered batch: add (the routes first seen come
// back as keys: [id, group, iifindex, words (Uint32Array, packet_fields.h), texts, cookies
// (Uint8Array each)]), an answer per new route (answer: the JSON line's pieces; answerHuman: the
// human line's texts), render (the lines into the caller's buffer) and
// takeCounts (per route: its id, sampled packets and the packets they stand for, for the metrics).
// Nothing per packet crosses to JavaScript.
#include "napi/addon_watch_lines.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "napi/addon_event_human.h"
#include "napi/arguments.h"
#include "render/watch_lines.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

[[noreturn]] void throw_usage(Napi::Env env, const std::string& usage) {
  ovnpsample::throw_usage(env, "NativeWatchLines", usage);
}

// A Uint8Array's bytes, or "" for undefined (an absent piece).
bool bytes_of(const Napi::Value& value, std::string& to) {
  if (value.IsUndefined()) return true;
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) return false;
  const Napi::Uint8Array bytes = value.As<Napi::Uint8Array>();
  to.assign(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
  return true;
}

constexpr const char* kConstructorUsage =
    "constructor({ groupWindowMs: number >= 0, bySourcePort: boolean, format: 'json' | 'human', color: boolean })";
constexpr const char* kAddUsage =
    "add(batch: ArrayBuffer, count: number, littleEndian: boolean, nowMs: number, wallMs: number)";
constexpr const char* kReleaseUsage = "release(nowMs: number, final: boolean)";
constexpr const char* kAnswerUsage =
    "answer(id: number, accepted: boolean, head: Uint8Array, steps: Uint8Array, src?: Uint8Array, dst?: Uint8Array, "
    "interface?: Uint8Array, datapath?: Uint8Array)";
constexpr const char* kAnswerHumanUsage =
    "answerHuman(id: number, accepted: boolean, verdict: number, policy: string, namespace: string, sides: string, "
    "interface: string, sentence: string)";
constexpr const char* kSetClockUsage = "setClock(second: number, secondsOfDay: number below 86400)";
constexpr const char* kRenderUsage = "render(out: Uint8Array, numbers: Float64Array(renderSlots))";

class WatchLinesWrap : public Napi::ObjectWrap<WatchLinesWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    Napi::Object count_slot = Napi::Object::New(env);
    Napi::Object render_slot = Napi::Object::New(env);
#define OVNPSAMPLE_SLOT(id, name, index) count_slot.Set(#name, index);
    OVNPSAMPLE_WATCH_ROUTE_COUNTS(OVNPSAMPLE_SLOT)
#undef OVNPSAMPLE_SLOT
#define OVNPSAMPLE_SLOT(id, name, index) render_slot.Set(#name, index);
    OVNPSAMPLE_WATCH_RENDER_SLOTS(OVNPSAMPLE_SLOT)
#undef OVNPSAMPLE_SLOT
    return DefineClass(
        env, "NativeWatchLines",
        {StaticValue("countSlot", count_slot),
         StaticValue("countSlots", Napi::Number::New(env, watch_lines::kCountSlots)),
         StaticValue("renderSlot", render_slot),
         StaticValue("renderSlots", Napi::Number::New(env, watch_lines::kRenderSlots)),
         InstanceMethod("add", &WatchLinesWrap::Add), InstanceMethod("release", &WatchLinesWrap::Release),
         InstanceMethod("answer", &WatchLinesWrap::Answer), InstanceMethod("answerHuman", &WatchLinesWrap::AnswerHuman),
         InstanceMethod("render", &WatchLinesWrap::Render), InstanceMethod("takeCounts", &WatchLinesWrap::TakeCounts),
         InstanceMethod("setClock", &WatchLinesWrap::SetClock),
         InstanceMethod("forgetRoutes", &WatchLinesWrap::ForgetRoutes),
         InstanceMethod("close", &WatchLinesWrap::Close)});
  }

  explicit WatchLinesWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<WatchLinesWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw_usage(env, kConstructorUsage);
    const Napi::Object o = info[0].As<Napi::Object>();
    const Napi::Value window = o.Get("groupWindowMs");
    const Napi::Value by_source_port = o.Get("bySourcePort");
    const Napi::Value format = o.Get("format");
    const Napi::Value color = o.Get("color");
    if (!finite(window) || window.As<Napi::Number>().DoubleValue() < 0 || !by_source_port.IsBoolean() ||
        !format.IsString() || !color.IsBoolean())
      throw_usage(env, kConstructorUsage);
    const std::string format_name = format.As<Napi::String>().Utf8Value();
    if (format_name != "json" && format_name != "human") throw_usage(env, kConstructorUsage);
    WatchLinesOptions options;
    options.group_window_ms = window.As<Napi::Number>().DoubleValue();
    options.by_source_port = by_source_port.As<Napi::Boolean>().Value();
    options.human = format_name == "human";
    options.color = color.As<Napi::Boolean>().Value();
    human_ = options.human;
    lines_ = std::make_unique<WatchLines>(options);
  }

 private:
  WatchLines& lines(Napi::Env env) {
    if (!lines_) throw_closed(env, "NativeWatchLines");
    return *lines_;
  }

  Napi::Array keys_of(Napi::Env env, const std::vector<uint32_t>& fresh) {
    Napi::Array keys = Napi::Array::New(env, fresh.size() * 6);
    uint32_t key_at = 0;
    for (const uint32_t index : fresh) {
      const WatchRoute& route = lines_->route(index);
      Napi::Uint32Array words = Napi::Uint32Array::New(env, packet_fields::kWords);
      std::copy(route.words, route.words + packet_fields::kWords, words.Data());
      Napi::Array cookies = Napi::Array::New(env);
      uint32_t cookie_count = 0;
      for (size_t at = 0; at + sizeof(uint32_t) <= route.cookies.size();) {
        uint32_t length = 0;
        std::memcpy(&length, route.cookies.data() + at, sizeof length);
        at += sizeof length;
        cookies.Set(cookie_count++, Napi::Buffer<uint8_t>::Copy(
                                        env, reinterpret_cast<const uint8_t*>(route.cookies.data() + at), length));
        at += length;
      }
      keys.Set(key_at++, Napi::Number::New(env, route.id));
      keys.Set(key_at++, Napi::Number::New(env, route.group));
      keys.Set(key_at++, Napi::Number::New(env, route.iifindex));
      keys.Set(key_at++, words);
      keys.Set(key_at++, Napi::String::New(env, route.texts));
      keys.Set(key_at++, cookies);
    }
    return keys;
  }

  // add(...) -> the new routes' keys
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsArrayBuffer() || !whole(info[1], 0xffffffff) || !info[2].IsBoolean() || !finite(info[3]) ||
        !finite(info[4]))
      throw_usage(env, kAddUsage);
    WatchLines& watch = lines(env);
    Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
    const Batch batch{static_cast<const uint8_t*>(buffer.Data()), buffer.ByteLength(),
                      info[2].As<Napi::Boolean>().Value() != layout::kLittleEndian};
    return keys_of(env, watch.add(batch, info[1].As<Napi::Number>().Uint32Value(),
                                  info[3].As<Napi::Number>().DoubleValue(), info[4].As<Napi::Number>().DoubleValue()));
  }

  // release(nowMs, final) -> the new routes' keys
  Napi::Value Release(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!finite(info[0]) || !info[1].IsBoolean()) throw_usage(env, kReleaseUsage);
    WatchLines& watch = lines(env);
    return keys_of(env, watch.release(info[0].As<Napi::Number>().DoubleValue(), info[1].As<Napi::Boolean>().Value()));
  }

  void Answer(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    WatchRouteAnswer answer;
    if (human_ || !whole(info[0], 0xffffffff) || !info[1].IsBoolean() || !info[2].IsTypedArray() ||
        !info[3].IsTypedArray() || !bytes_of(info[2], answer.head) || !bytes_of(info[3], answer.steps) ||
        !bytes_of(info[4], answer.src) || !bytes_of(info[5], answer.dst) || !bytes_of(info[6], answer.interface) ||
        !bytes_of(info[7], answer.datapath))
      throw_usage(env, kAnswerUsage);
    answer.accepted = info[1].As<Napi::Boolean>().Value();
    if (!lines(env).answer(info[0].As<Napi::Number>().Uint32Value(), std::move(answer)))
      throw_usage(env, std::string(kAnswerUsage) + ": no route has this id");
  }

  void AnswerHuman(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    WatchRouteAnswer answer;
    if (!human_ || !whole(info[0], 0xffffffff) || !info[1].IsBoolean() || !human_line_texts(info, 2, answer.human))
      throw_usage(env, kAnswerHumanUsage);
    answer.accepted = info[1].As<Napi::Boolean>().Value();
    if (!lines(env).answer(info[0].As<Napi::Number>().Uint32Value(), std::move(answer)))
      throw_usage(env, std::string(kAnswerHumanUsage) + ": no route has this id");
  }

  void Render(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
        !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[1].As<Napi::Float64Array>().ElementLength() != watch_lines::kRenderSlots)
      throw_usage(env, kRenderUsage);
    Napi::Uint8Array out = info[0].As<Napi::Uint8Array>();
    double* n = info[1].As<Napi::Float64Array>().Data();
    if (!whole(Napi::Number::New(env, n[watch_lines::kRenderAt]), static_cast<double>(out.ByteLength())))
      throw_usage(env, kRenderUsage);
    if (!lines(env).render(out.Data(), out.ByteLength(), n))
      throw_usage(env, std::string(kRenderUsage) + ": a released packet's route was not answered");
  }

  void SetClock(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!whole(info[0], 0x1p53) || !whole(info[1], 86399)) throw_usage(env, kSetClockUsage);
    lines(env).set_clock(static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue()),
                         info[1].As<Napi::Number>().Uint32Value());
  }

  // takeCounts() -> Float64Array (countSlots per route counted since the last call)
  Napi::Value TakeCounts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    counts_.clear();
    lines(env).take_counts([&](const WatchRoute& route) {
      counts_.insert(counts_.end(), {static_cast<double>(route.id), route.sampled_packets, route.packets});
    });
    Napi::Float64Array counts = Napi::Float64Array::New(env, counts_.size());
    std::copy(counts_.begin(), counts_.end(), counts.Data());
    return counts;
  }

  void ForgetRoutes(const Napi::CallbackInfo& info) { lines(info.Env()).forget_routes(); }

  void Close(const Napi::CallbackInfo&) { lines_.reset(); }

  std::unique_ptr<WatchLines> lines_;
  bool human_ = false;
  std::vector<double> counts_;
};

}  // namespace

Napi::Function define_watch_lines(Napi::Env env) { return WatchLinesWrap::Define(env); }

}  // namespace ovnpsample
