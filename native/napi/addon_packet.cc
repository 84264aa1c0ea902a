#include "napi/addon_packet.h"

#include <string>

#include "packet/address_text.h"
#include "packet/packet_fields.h"
#include "packet/packet_json.h"
#include "packet/packet_text.h"
#include "wire/batch_layout.h"

namespace ovnpsample {

namespace {

using PacketWriter = void (*)(std::string&, const uint8_t*, size_t, uint16_t);

// Called once per packet or batch on the CLI's hot path, so written against the C API
// (node-addon-api's wrappers ask V8 for a typed array twice), into reused buffers.

template <typename T>
struct TypedBytes {
  T* data = nullptr;
  size_t length = 0;  // elements
};

template <typename T>
bool typed(napi_env env, napi_value value, napi_typedarray_type want, TypedBytes<T>& out) {
  napi_typedarray_type type = napi_int8_array;
  void* data = nullptr;
  return napi_get_typedarray_info(env, value, &type, &out.length, &data, nullptr, nullptr) == napi_ok && type == want &&
         (out.data = static_cast<T*>(data), true);
}

bool whole(napi_env env, napi_value value, double max, double& out) {
  return napi_get_value_double(env, value, &out) == napi_ok && out >= 0 && out <= max &&
         out == static_cast<double>(static_cast<uint64_t>(out));
}

napi_value latin1(napi_env env, const std::string& text) {
  napi_value value = nullptr;
  napi_create_string_latin1(env, text.data(), text.size(), &value);
  return value;
}

napi_value usage(napi_env env, const char* text) {
  napi_throw_type_error(env, nullptr, text);
  return nullptr;
}

// packetJson(data, proto) / packetText(data, proto): both ASCII, returned as Latin-1, which V8
// copies without decoding UTF-8.
template <PacketWriter kWrite>
napi_value PacketForm(napi_env env, napi_callback_info info, const char* text) {
  size_t argc = 2;
  napi_value argv[2];
  TypedBytes<uint8_t> data;
  double proto = -1;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 2 ||
      !typed(env, argv[0], napi_uint8_array, data) || !whole(env, argv[1], 0xffff, proto))
    return usage(env, text);
  thread_local std::string out;
  out.clear();
  kWrite(out, data.data, data.length, static_cast<uint16_t>(proto));
  return latin1(env, out);
}

napi_value PacketJson(napi_env env, napi_callback_info info) {
  return PacketForm<append_packet_json>(env, info, "packetJson(data: Uint8Array, proto: integer 0-65535)");
}

napi_value PacketText(napi_env env, napi_callback_info info) {
  return PacketForm<append_packet_text>(env, info, "packetText(data: Uint8Array, proto: integer 0-65535)");
}

napi_value PacketFields(napi_env env, napi_callback_info info) {
  const char* text =
      "packetFields(batch: ArrayBuffer, count, littleEndian: boolean, words: Uint32Array(count * words))";
  size_t argc = 4;
  napi_value argv[4];
  void* batch = nullptr;
  size_t batch_size = 0;
  bool is_buffer = false;
  double count = -1;
  bool little_endian = true;
  TypedBytes<uint32_t> words;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 4 ||
      napi_is_arraybuffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer ||
      napi_get_arraybuffer_info(env, argv[0], &batch, &batch_size) != napi_ok ||
      !whole(env, argv[1], 0xffffffff, count) || napi_get_value_bool(env, argv[2], &little_endian) != napi_ok ||
      !typed(env, argv[3], napi_uint32_array, words) ||
      words.length < static_cast<size_t>(count) * packet_fields::kWords)
    return usage(env, text);
  const Batch b{static_cast<const uint8_t*>(batch), batch_size, little_endian != layout::kLittleEndian};
  thread_local std::string texts;
  texts.clear();
  decode_batch_fields(b, static_cast<uint32_t>(count), words.data, texts);
  return latin1(env, texts);
}

napi_value DecodePacketFields(napi_env env, napi_callback_info info) {
  const char* text = "decodePacketFields(data: Uint8Array, proto: integer 0-65535, words: Uint32Array(words))";
  size_t argc = 3;
  napi_value argv[3];
  TypedBytes<uint8_t> data;
  double proto = -1;
  TypedBytes<uint32_t> words;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 3 ||
      !typed(env, argv[0], napi_uint8_array, data) || !whole(env, argv[1], 0xffff, proto) ||
      !typed(env, argv[2], napi_uint32_array, words) || words.length < packet_fields::kWords)
    return usage(env, text);
  thread_local std::string texts;
  texts.clear();
  const auto proto16 = static_cast<uint16_t>(proto);
  store_fields(decode_packet(data.data, data.length, proto16), proto16, words.data, texts);
  return latin1(env, texts);
}

// The packet a slot of `words` holds, with its bytes: false for arguments of another shape.
bool slot_packet(napi_env env, const napi_value* argv, DecodedPacket& p) {
  TypedBytes<uint32_t> words;
  TypedBytes<uint8_t> data;
  double slot = -1;
  if (!typed(env, argv[0], napi_uint32_array, words) || !whole(env, argv[1], 0xffffffff, slot) ||
      !typed(env, argv[2], napi_uint8_array, data) ||
      (static_cast<size_t>(slot) + 1) * packet_fields::kWords > words.length)
    return false;
  p = load_fields(words.data + static_cast<size_t>(slot) * packet_fields::kWords, data.data, data.length);
  return true;
}

napi_value PacketTuple(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  DecodedPacket p;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 3 || !slot_packet(env, argv, p))
    return usage(env, "packetTuple(words: Uint32Array, slot, data: Uint8Array)");
  thread_local std::string out;
  out.clear();
  append_packet_tuple(out, p);
  napi_value value = nullptr;
  napi_create_string_utf8(env, out.data(), out.size(), &value);
  return value;
}

napi_value AddressText(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  TypedBytes<uint8_t> bytes;
  double offset = -1;
  double length = -1;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 3 ||
      !typed(env, argv[0], napi_uint8_array, bytes) ||
      !whole(env, argv[1], static_cast<double>(bytes.length), offset) || !whole(env, argv[2], 16, length) ||
      (length != 4 && length != 16) || static_cast<size_t>(offset + length) > bytes.length)
    return usage(env, "addressText(bytes: Uint8Array, offset, length: 4 | 16)");
  char text[kIpv6TextMax];
  const uint8_t* at = bytes.data + static_cast<size_t>(offset);
  const size_t written = length == 4 ? format_ipv4(text, at) : format_ipv6(text, at);
  napi_value value = nullptr;
  napi_create_string_latin1(env, text, written, &value);
  return value;
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
  export_function(env, exports, "packetFields", PacketFields);
  export_function(env, exports, "decodePacketFields", DecodePacketFields);
  export_function(env, exports, "packetTuple", PacketTuple);
  export_function(env, exports, "addressText", AddressText);
}

}  // namespace ovnpsample
