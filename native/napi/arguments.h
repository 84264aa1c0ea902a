// What the addon's classes check their JavaScript arguments with, the one error a wrong argument
// throws (a TypeError with code INVALID_OPTION naming the method's usage), and the one a closed
// object throws (code CLOSED).
#pragma once

#include <napi.h>

#include <cmath>
#include <string>

namespace ovnpsample {

// Throws "CLASS.USAGE": usage says how the method is called.
[[noreturn]] inline void throw_usage(Napi::Env env, const char* class_name, const std::string& usage) {
  Napi::Error e = Napi::TypeError::New(env, std::string(class_name) + "." + usage);
  e.Set("code", Napi::String::New(env, "INVALID_OPTION"));
  throw e;
}

// Throws "CLASS: used after close()".
[[noreturn]] inline void throw_closed(Napi::Env env, const char* class_name) {
  Napi::Error e = Napi::Error::New(env, std::string(class_name) + ": used after close()");
  e.Set("code", Napi::String::New(env, "CLOSED"));
  throw e;
}

// A whole number from 0 to max.
inline bool whole(const Napi::Value& value, double max) {
  if (!value.IsNumber()) return false;
  const double v = value.As<Napi::Number>().DoubleValue();
  return v >= 0 && v <= max && std::floor(v) == v;
}

inline bool finite(const Napi::Value& value) {
  return value.IsNumber() && std::isfinite(value.As<Napi::Number>().DoubleValue());
}

}  // namespace ovnpsample
