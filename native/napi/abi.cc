#include "napi/abi.h"

#include "packet/packet_fields.h"
#include "wire/batch_layout.h"
#include "wire/socket_stats.h"

namespace ovnpsample {

namespace {

template <size_t N>
Napi::Array describe_fields(Napi::Env env, const layout::Field (&fields)[N]) {
  Napi::Array out = Napi::Array::New(env, N);
  for (uint32_t i = 0; i < N; i++) {
    Napi::Object field = Napi::Object::New(env);
    field.Set("name", fields[i].name);
    field.Set("offset", fields[i].offset);
    field.Set("width", fields[i].width);
    field.Set("kind", fields[i].kind == layout::FieldKind::kNumber ? "number" : "bytes");
    out.Set(i, field);
  }
  return out;
}

}  // namespace

Napi::Object describe_abi(Napi::Env env) {
  Napi::Object abi = Napi::Object::New(env);
  abi.Set("littleEndian", layout::kLittleEndian);
  abi.Set("recordBytes", layout::record::kBytes);
  abi.Set("record", describe_fields(env, layout::kRecordFields));
  Napi::Object flags = Napi::Object::New(env);
  for (const layout::Flag& flag : layout::kRecordFlags) flags.Set(flag.name, flag.bit);
  abi.Set("recordFlags", flags);
  abi.Set("tunnelBlockBytes", layout::tunnel_block::kBytes);
  abi.Set("tunnelBlock", describe_fields(env, layout::kTunnelBlockFields));
  Napi::Array stats = Napi::Array::New(env, kStatCount);
  for (uint32_t i = 0; i < kStatCount; i++) {
    Napi::Object stat = Napi::Object::New(env);
    stat.Set("name", kStatInfo[i].name);
    stat.Set("doc", kStatInfo[i].doc);
    stats.Set(i, stat);
  }
  abi.Set("stats", stats);
  Napi::Object packet_words = Napi::Object::New(env);
  for (const packet_fields::Name& word : packet_fields::kWordNames) packet_words.Set(word.name, word.value);
  abi.Set("packetFields", packet_words);
  Napi::Object packet_flags = Napi::Object::New(env);
  for (const packet_fields::Name& flag : packet_fields::kFlagNames) packet_flags.Set(flag.name, flag.value);
  abi.Set("packetFlags", packet_flags);
  abi.Set("packetFieldWords", packet_fields::kWords);
  return abi;
}

}  // namespace ovnpsample
