// NativeFlowTable: one instance per `watch --aggregate`, owned by its JavaScript object and, once
// a NativeReader feeds it, by that reader's thread too (nothing global, so workers each have their
// own). One call per batch JavaScript holds (add) and one per drain: nothing per packet crosses to
// JavaScript. A drain returns the touched flows' numbers in one
// Float64Array (slots named by the class's countSlot) and, for a flow JavaScript has not seen yet,
// its key: [id, group, words (Uint32Array, packet_fields.h), texts, cookies (Uint8Array each)].
#include "napi/addon_flow_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "aggregate/flow_table.h"
#include "aggregate/shared_flow_table.h"
#include "napi/arguments.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

[[noreturn]] void throw_usage(Napi::Env env, const std::string& usage) {
  ovnpsample::throw_usage(env, "NativeFlowTable", usage);
}

constexpr const char* kConstructorUsage =
    "constructor({ groupWindowMs: number >= 0, maxFlows: whole number >= 1, bySourcePort: boolean })";
constexpr const char* kAddUsage = "add(batch: ArrayBuffer, count: number, littleEndian: boolean)";
constexpr const char* kDrainUsage = "drain(final: boolean, endInterval: boolean, stats: Float64Array(statSlots))";

// Marks a NativeFlowTable, so a NativeReader told to feed one knows it is one.
constexpr napi_type_tag kFlowTableTag = {0x6f766e7073616d70, 0x666c6f777461626c};

class FlowTableWrap : public Napi::ObjectWrap<FlowTableWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    Napi::Object count_slot = Napi::Object::New(env);
    Napi::Object stat_slot = Napi::Object::New(env);
#define OVNPSAMPLE_COUNT_SLOT(id, name, index) count_slot.Set(#name, index);
    OVNPSAMPLE_FLOW_COUNT_SLOTS(OVNPSAMPLE_COUNT_SLOT)
#undef OVNPSAMPLE_COUNT_SLOT
#define OVNPSAMPLE_STAT_SLOT(id, name, index) stat_slot.Set(#name, index);
    OVNPSAMPLE_FLOW_TABLE_STATS(OVNPSAMPLE_STAT_SLOT)
#undef OVNPSAMPLE_STAT_SLOT
    return DefineClass(
        env, "NativeFlowTable",
        {StaticValue("countSlot", count_slot),
         StaticValue("countSlots", Napi::Number::New(env, flow_table::kCountSlots)), StaticValue("statSlot", stat_slot),
         StaticValue("statSlots", Napi::Number::New(env, flow_table::kStatSlots)),
         StaticMethod("packetsSampledBy", &FlowTableWrap::PacketsSampledBy), InstanceMethod("add", &FlowTableWrap::Add),
         InstanceMethod("drain", &FlowTableWrap::Drain), InstanceMethod("close", &FlowTableWrap::Close),
         InstanceAccessor("closed", &FlowTableWrap::Closed, nullptr)});
  }

  explicit FlowTableWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FlowTableWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw_usage(env, kConstructorUsage);
    const Napi::Object o = info[0].As<Napi::Object>();
    const Napi::Value window = o.Get("groupWindowMs");
    const Napi::Value max_flows = o.Get("maxFlows");
    const Napi::Value by_source_port = o.Get("bySourcePort");
    if (!finite(window) || window.As<Napi::Number>().DoubleValue() < 0 || !whole(max_flows, 0x1p32) ||
        max_flows.As<Napi::Number>().DoubleValue() < 1 || !by_source_port.IsBoolean())
      throw_usage(env, kConstructorUsage);
    FlowTableOptions options;
    options.group_window_ms = window.As<Napi::Number>().DoubleValue();
    options.max_flows = static_cast<size_t>(max_flows.As<Napi::Number>().DoubleValue());
    options.by_source_port = by_source_port.As<Napi::Boolean>().Value();
    table_ = std::make_shared<SharedFlowTable>(options);
    info.This().As<Napi::Object>().TypeTag(&kFlowTableTag);
  }

  static std::shared_ptr<SharedFlowTable> Of(const Napi::Value& value) {
    if (!value.IsObject() || !value.As<Napi::Object>().CheckTypeTag(&kFlowTableTag)) return nullptr;
    return Unwrap(value.As<Napi::Object>())->table_;
  }

 private:
  SharedFlowTable& table(Napi::Env env) {
    if (table_->closed()) throw_closed(env, "NativeFlowTable");
    return *table_;
  }

  // packetsSampledBy(rate, probability): the rule, for the TypeScript copy's check.
  static Napi::Value PacketsSampledBy(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!whole(info[0], 0xffffffff) || !info[1].IsBoolean())
      throw_usage(env, "packetsSampledBy(rate: u32, probability: boolean)");
    return Napi::Number::New(
        env, packets_sampled_by(info[0].As<Napi::Number>().Uint32Value(), info[1].As<Napi::Boolean>().Value()));
  }

  // add(...) -> packets waiting in the grouping window
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsArrayBuffer() || !whole(info[1], 0xffffffff) || !info[2].IsBoolean()) throw_usage(env, kAddUsage);
    SharedFlowTable& flows = table(env);
    Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
    const Batch batch{static_cast<const uint8_t*>(buffer.Data()), buffer.ByteLength(),
                      info[2].As<Napi::Boolean>().Value() != layout::kLittleEndian};
    return Napi::Number::New(env, static_cast<double>(flows.add(batch, info[1].As<Napi::Number>().Uint32Value())));
  }

  // drain(...) -> [counts: Float64Array, keys: array]
  Napi::Value Drain(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsBoolean() || !info[1].IsBoolean() || !info[2].IsTypedArray() ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[2].As<Napi::Float64Array>().ElementLength() != flow_table::kStatSlots)
      throw_usage(env, kDrainUsage);
    SharedFlowTable& flows = table(env);
    counts_.clear();
    Napi::Array keys = Napi::Array::New(env);
    uint32_t key_at = 0;
    flows.drain(info[0].As<Napi::Boolean>().Value(), info[1].As<Napi::Boolean>().Value(),
                info[2].As<Napi::Float64Array>().Data(), [&](const NativeFlow& flow) {
                  counts_.insert(counts_.end(), {static_cast<double>(flow.id), flow.sampled_packets, flow.samples,
                                                 flow.packets, flow.first_ns, flow.last_ns});
                  if (flow.announced) return;
                  Napi::Uint32Array words = Napi::Uint32Array::New(env, packet_fields::kWords);
                  std::copy(flow.words, flow.words + packet_fields::kWords, words.Data());
                  Napi::Array cookies = Napi::Array::New(env);
                  uint32_t cookie_count = 0;
                  for (size_t at = 0; at + sizeof(uint32_t) <= flow.cookies.size();) {
                    uint32_t length = 0;
                    std::memcpy(&length, flow.cookies.data() + at, sizeof length);
                    at += sizeof length;
                    cookies.Set(cookie_count++,
                                Napi::Buffer<uint8_t>::Copy(
                                    env, reinterpret_cast<const uint8_t*>(flow.cookies.data() + at), length));
                    at += length;
                  }
                  keys.Set(key_at++, Napi::Number::New(env, flow.id));
                  keys.Set(key_at++, Napi::Number::New(env, flow.group));
                  keys.Set(key_at++, words);
                  keys.Set(key_at++, Napi::String::New(env, flow.texts));
                  keys.Set(key_at++, cookies);
                });
    Napi::Float64Array counts = Napi::Float64Array::New(env, counts_.size());
    std::copy(counts_.begin(), counts_.end(), counts.Data());
    Napi::Array out = Napi::Array::New(env, 2);
    out.Set(0u, counts);
    out.Set(1u, keys);
    return out;
  }

  Napi::Value Closed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), table_->closed()); }

  // The table's memory goes now, even while a reader still holds it (it then counts what it reads as discarded).
  void Close(const Napi::CallbackInfo&) { table_->close(); }

  std::shared_ptr<SharedFlowTable> table_;
  std::vector<double> counts_;
};

}  // namespace

Napi::Function define_flow_table(Napi::Env env) { return FlowTableWrap::Define(env); }

std::shared_ptr<BatchConsumer> flow_table_consumer(const Napi::Value& value) { return FlowTableWrap::Of(value); }

}  // namespace ovnpsample
