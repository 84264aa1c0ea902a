#include "addon_packet.h"

#include <string>

#include "packet_json.h"

namespace ovnpsample {

namespace {

constexpr const char* kUsage = "packetJson(data: Uint8Array, proto: integer 0-65535)";

// packetJson(data, proto) -> the JSON text of the decoded packet. Called once per sampled packet
// on the CLI's hot path: a reused buffer, and a Latin-1 string (the JSON is ASCII) that V8 copies
// without decoding UTF-8.
Napi::Value PacketJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, kUsage);
  }
  const double proto = info[1].As<Napi::Number>().DoubleValue();
  if (!(proto >= 0 && proto <= 0xffff) || proto != static_cast<double>(static_cast<uint32_t>(proto))) {
    throw Napi::TypeError::New(env, kUsage);
  }
  Napi::Uint8Array data = info[0].As<Napi::Uint8Array>();
  thread_local std::string json;
  json.clear();
  append_packet_json(json, data.Data(), data.ByteLength(), static_cast<uint16_t>(proto));
  napi_value text;
  NAPI_THROW_IF_FAILED(env, napi_create_string_latin1(env, json.data(), json.size(), &text), Napi::Value());
  return Napi::Value(env, text);
}

}  // namespace

void export_packet_json(Napi::Env env, Napi::Object exports) {
  exports.Set("packetJson", Napi::Function::New(env, PacketJson, "packetJson"));
}

}  // namespace ovnpsample
