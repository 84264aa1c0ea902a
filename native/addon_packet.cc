#include "addon_packet.h"

#include <string>

#include "packet_json.h"

namespace ovnpsample {

namespace {

constexpr const char* kUsage = "packetJson(data: Uint8Array, proto: integer 0-65535)";

// packetJson(data, proto) -> the JSON text of the decoded packet. Called once per sampled packet
// on the CLI's hot path, so written against the C API (node-addon-api's wrappers ask V8 for the
// typed array twice) into a reused buffer, and returned as a Latin-1 string (the JSON is ASCII),
// which V8 copies without decoding UTF-8.
napi_value PacketJson(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_typedarray_type type = napi_int8_array;
  size_t length = 0;
  void* data = nullptr;
  double proto = -1;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 2 ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array || napi_get_value_double(env, argv[1], &proto) != napi_ok || !(proto >= 0 && proto <= 0xffff) ||
      proto != static_cast<double>(static_cast<uint16_t>(proto))) {
    napi_throw_type_error(env, nullptr, kUsage);
    return nullptr;
  }
  thread_local std::string json;
  json.clear();
  append_packet_json(json, static_cast<const uint8_t*>(data), length, static_cast<uint16_t>(proto));
  napi_value text = nullptr;
  napi_create_string_latin1(env, json.data(), json.size(), &text);
  return text;
}

}  // namespace

void export_packet_json(Napi::Env env, Napi::Object exports) {
  napi_value function = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "packetJson", NAPI_AUTO_LENGTH, PacketJson, nullptr, &function));
  exports.Set("packetJson", function);
}

}  // namespace ovnpsample
