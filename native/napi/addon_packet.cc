#include "napi/addon_packet.h"

#include <string>

#include "packet/packet_json.h"
#include "packet/packet_text.h"

namespace ovnpsample {

namespace {

using PacketWriter = void (*)(std::string&, const uint8_t*, size_t, uint16_t);

// packetJson(data, proto) -> the JSON text of the decoded packet; packetText(data, proto) -> its
// description. Called once per sampled packet on the CLI's hot path, so written against the C API
// (node-addon-api's wrappers ask V8 for the typed array twice) into a reused buffer, and returned
// as a Latin-1 string (both are ASCII), which V8 copies without decoding UTF-8.
template <PacketWriter kWrite>
napi_value PacketForm(napi_env env, napi_callback_info info, const char* usage) {
  size_t argc = 2;
  napi_value argv[2];
  napi_typedarray_type type = napi_int8_array;
  size_t length = 0;
  void* data = nullptr;
  double proto = -1;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 2 ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array || napi_get_value_double(env, argv[1], &proto) != napi_ok ||
      !(proto >= 0 && proto <= 0xffff) || proto != static_cast<double>(static_cast<uint16_t>(proto))) {
    napi_throw_type_error(env, nullptr, usage);
    return nullptr;
  }
  thread_local std::string text;
  text.clear();
  kWrite(text, static_cast<const uint8_t*>(data), length, static_cast<uint16_t>(proto));
  napi_value value = nullptr;
  napi_create_string_latin1(env, text.data(), text.size(), &value);
  return value;
}

napi_value PacketJson(napi_env env, napi_callback_info info) {
  return PacketForm<append_packet_json>(env, info, "packetJson(data: Uint8Array, proto: integer 0-65535)");
}

napi_value PacketText(napi_env env, napi_callback_info info) {
  return PacketForm<append_packet_text>(env, info, "packetText(data: Uint8Array, proto: integer 0-65535)");
}

void export_function(Napi::Env env, Napi::Object exports, const char* name, napi_callback callback) {
  napi_value function = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, name, NAPI_AUTO_LENGTH, callback, nullptr, &function));
  exports.Set(name, function);
}

}  // namespace

void export_packet_forms(Napi::Env env, Napi::Object exports) {
  export_function(env, exports, "packetJson", PacketJson);
  export_function(env, exports, "packetText", PacketText);
}

}  // namespace ovnpsample
