// N-API surface: Reader (socket + reader thread), Injector, and the offline decoder.
// State is per environment (instance data), so the addon works in worker threads, and every
// thread a Reader starts is joined before its environment's thread-safe function goes away.
#include <napi.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "napi/abi.h"
#include "napi/addon_event_human.h"
#include "napi/addon_event_json.h"
#include "napi/addon_flow_table.h"
#include "napi/addon_packet.h"
#include "napi/addon_render.h"
#include "napi/addon_watch_lines.h"
#include "privileges/privileges.h"
#include "socket/injector.h"
#include "socket/reader.h"
#include "wire/psample_parser.h"
#include "wire/sample_batch.h"
#include "wire/socket_stats.h"

namespace ovnpsample {

namespace {

[[noreturn]] void throw_setup_error(Napi::Env env, const SetupError& error) {
  Napi::Error e = Napi::Error::New(env, error.message);
  e.Set("code", Napi::String::New(env, error.code));
  if (error.errnum != 0) e.Set("errno", Napi::Number::New(env, error.errnum));
  throw e;
}

[[noreturn]] void throw_invalid(Napi::Env env, const std::string& message) {
  throw_setup_error(env, setup_error("INVALID_OPTION", message));
}

// Flattened [buffer, count, ...] so JS reads the messages itself. The bytes are copied into an
// ordinary ArrayBuffer: for batches of at most 64 KiB that is cheaper than an external one,
// whose finalizer costs a global handle and a weak callback per batch. Node's Buffer::Copy
// allocates without zero-filling, which ArrayBuffer::New does: the copy overwrites every byte,
// and under TCG, where the lab measures, zeroing a batch costs what copying it does.
void push_batch(Napi::Env env, Napi::Array& out, const SampleBatch& batch) {
  const uint32_t i = out.Length();
  out.Set(i, batch.size() == 0 ? Napi::ArrayBuffer::New(env, 0)
                               : Napi::Buffer<uint8_t>::Copy(env, batch.bytes.data(), batch.size()).ArrayBuffer());
  out.Set(i + 1, Napi::Number::New(env, batch.count));
}

SourceProtocol parse_protocol(Napi::Env env, const std::string& name) {
  if (name == "kernel") return SourceProtocol::kKernelPsample;
  if (name == "generic") return SourceProtocol::kGeneric;
  if (name == "usersock") return SourceProtocol::kUsersock;
  throw_invalid(env, "source.protocol must be 'generic' or 'usersock'");
}

uint32_t get_u32(const Napi::Object& o, const char* key, uint32_t fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Uint32Value() : fallback;
}

bool get_bool(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return v.IsBoolean() && v.As<Napi::Boolean>().Value();
}

std::string get_string(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
}

// Counts cross to JavaScript as doubles in socket_stats.h's order: exact below 2^53.
Napi::Float64Array stats_argument(Napi::Value value, const char* usage) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
      value.As<Napi::Float64Array>().ElementLength() != kStatCount)
    throw_invalid(value.Env(), usage);
  return value.As<Napi::Float64Array>();
}

void write_stats(const Stats& stats, Napi::Float64Array out) {
  for (size_t i = 0; i < kStatCount; i++) out[i] = static_cast<double>(stats[i]);
}

class ReaderWrap;

// Shared by the wrap and the thread-safe function: whichever goes first must not leave the
// other with a dangling pointer (the TSFN may finalize at environment teardown before the wrap).
struct Link {
  std::shared_ptr<Reader> reader;
  ReaderWrap* wrap = nullptr;
  napi_threadsafe_function tsfn = nullptr;
};

class ReaderWrap : public Napi::ObjectWrap<ReaderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeReader",
                       {InstanceMethod("take", &ReaderWrap::Take), InstanceMethod("stats", &ReaderWrap::Stats),
                        InstanceMethod("close", &ReaderWrap::Close), InstanceMethod("ref", &ReaderWrap::Ref),
                        InstanceMethod("unref", &ReaderWrap::Unref), InstanceMethod("info", &ReaderWrap::Info),
                        InstanceMethod("feed", &ReaderWrap::Feed)});
  }

  // new NativeReader(options, onReadable)
  explicit ReaderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ReaderWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject() || !info[1].IsFunction()) throw_invalid(env, "NativeReader(options, onReadable)");
    const Napi::Object o = info[0].As<Napi::Object>();
    SocketOptions options;
    options.netns = get_string(o, "netns");
    options.protocol = parse_protocol(env, o.Has("protocol") ? get_string(o, "protocol") : "kernel");
    options.family_id = static_cast<uint16_t>(get_u32(o, "familyId", 0));
    options.group_id = get_u32(o, "groupId", 0);
    options.config_events = get_bool(o, "config");
    options.listen_all_nsid = get_bool(o, "listenAllNsid");
    options.receive_buffer_bytes = static_cast<int>(get_u32(o, "receiveBufferBytes", 32u << 20));
    if (o.Get("groups").IsArray()) {
      Napi::Array groups = o.Get("groups").As<Napi::Array>();
      for (uint32_t i = 0; i < groups.Length(); i++)
        options.groups.push_back(groups.Get(i).As<Napi::Number>().Uint32Value());
    }
    const size_t queue_capacity = get_u32(o, "queueCapacity", 262144);
    const auto delivery_interval = std::chrono::microseconds(get_u32(o, "deliveryIntervalUs", 0));

    on_readable_ = Napi::Persistent(info[1].As<Napi::Function>());
    link_ = std::make_shared<Link>();
    link_->wrap = this;
    auto* context = new std::shared_ptr<Link>(link_);
    napi_status status =
        napi_create_threadsafe_function(env, nullptr, nullptr, Napi::String::New(env, "ovn-psample reader"), 0, 1,
                                        context, FinalizeTsfn, context, CallJs, &link_->tsfn);
    if (status != napi_ok) {
      delete context;
      throw Napi::Error::New(env, "cannot create the thread-safe function of the reader");
    }
    napi_threadsafe_function tsfn = link_->tsfn;
    SetupError error;
    link_->reader = Reader::start(
        options, queue_capacity, [tsfn] { napi_call_threadsafe_function(tsfn, nullptr, napi_tsfn_nonblocking); }, error,
        delivery_interval);
    if (!link_->reader) {
      Release();
      throw_setup_error(env, error);
    }
  }

  ~ReaderWrap() override {
    link_->wrap = nullptr;
    Release();
  }

 private:
  // Plain Node-API with every status checked: this runs while the environment may be tearing down
  // (worker.terminate()), when calls into JavaScript fail and node-addon-api would build an Error
  // object, which the dying environment cannot do (it aborts the process).
  static void CallJs(napi_env env, napi_value, void* context, void*) {
    if (env == nullptr) return;  // environment teardown
    ReaderWrap* wrap = (*static_cast<std::shared_ptr<Link>*>(context))->wrap;
    if (wrap == nullptr || wrap->on_readable_.IsEmpty()) return;
    napi_value fn = nullptr;
    napi_value receiver = nullptr;
    // fn is null once the listener was collected after unref(): nobody listens any more.
    if (napi_get_reference_value(env, wrap->on_readable_, &fn) != napi_ok || fn == nullptr) return;
    if (napi_get_undefined(env, &receiver) != napi_ok) return;
    if (napi_call_function(env, receiver, fn, 0, nullptr, nullptr) != napi_pending_exception) return;
    // A listener threw. Node would only warn (DEP0168) below NAPI_VERSION_EXPERIMENTAL and drop
    // it: raise it as uncaughtException, like an exception in any other event callback.
    // (While the environment terminates nothing is pending, and there is nothing to raise.)
    bool pending = false;
    napi_value error = nullptr;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
        napi_get_and_clear_last_exception(env, &error) == napi_ok)
      (void)napi_fatal_exception(env, error);
  }

  static void FinalizeTsfn(napi_env, void* data, void*) {
    auto* link = static_cast<std::shared_ptr<Link>*>(data);
    // The TSFN is gone after this: the thread that calls it must be joined first.
    if ((*link)->reader) (*link)->reader->stop();
    (*link)->tsfn = nullptr;
    delete link;
  }

  void Release() {
    if (link_->reader) link_->reader->stop();
    if (link_->tsfn != nullptr) {
      napi_threadsafe_function tsfn = link_->tsfn;
      link_->tsfn = nullptr;
      napi_release_threadsafe_function(tsfn, napi_tsfn_abort);
    }
  }

  // take(stats: Float64Array(abi.stats.length)) -> batches; fills stats as stats() does.
  Napi::Value Take(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Float64Array out_stats = stats_argument(info[0], "take(stats: Float64Array(abi.stats.length))");
    Napi::Array out = Napi::Array::New(env);
    ovnpsample::Stats stats{};
    for (auto& batch : link_->reader->take(stats)) push_batch(env, out, *batch);
    write_stats(stats, out_stats);
    return out;
  }

  // feed(table: NativeFlowTable): the reader thread adds its batches to the table from now on.
  void Feed(const Napi::CallbackInfo& info) {
    std::shared_ptr<BatchConsumer> consumer = flow_table_consumer(info[0]);
    if (!consumer) throw_invalid(info.Env(), "feed(table: NativeFlowTable)");
    link_->reader->feed(std::move(consumer));
  }

  // stats(out: Float64Array(abi.stats.length)): every count, in socket_stats.h's order.
  void Stats(const Napi::CallbackInfo& info) {
    write_stats(link_->reader->stats(), stats_argument(info[0], "stats(out: Float64Array(abi.stats.length))"));
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Subscription s = link_->reader->subscription();
    Napi::Object o = Napi::Object::New(env);
    o.Set("familyId", Napi::Number::New(env, s.socket.family_id));
    o.Set("groupId", Napi::Number::New(env, s.socket.packets_group));
    o.Set("kernelFilter", Napi::Boolean::New(env, s.socket.kernel_filter));
    o.Set("receiveBufferBytes", Napi::Number::New(env, s.socket.receive_buffer_bytes));
    if (s.last_gap_ms >= 0) o.Set("lastGapMs", Napi::Number::New(env, s.last_gap_ms));
    return o;
  }

  // close(undelivered: number): stops the reader thread, then counts the messages JavaScript had
  // taken but not delivered with everything the reader counted as it stopped.
  void Close(const Napi::CallbackInfo& info) {
    Release();
    if (info[0].IsNumber())
      link_->reader->count_undelivered(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
    on_readable_.Reset();
  }

  // While referenced, an open reader keeps the event loop and its listener alive like a server;
  // unreferenced, it lets both go, and garbage collection of the socket closes it.
  void Ref(const Napi::CallbackInfo& info) {
    if (link_->tsfn != nullptr) napi_ref_threadsafe_function(info.Env(), link_->tsfn);
    if (!on_readable_.IsEmpty() && !listener_held_) on_readable_.Ref();
    listener_held_ = true;
  }

  void Unref(const Napi::CallbackInfo& info) {
    if (link_->tsfn != nullptr) napi_unref_threadsafe_function(info.Env(), link_->tsfn);
    if (!on_readable_.IsEmpty() && listener_held_) on_readable_.Unref();
    listener_held_ = false;
  }

  std::shared_ptr<Link> link_;
  Napi::FunctionReference on_readable_;
  bool listener_held_ = true;
};

class InjectorWrap : public Napi::ObjectWrap<InjectorWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeInjector",
                       {InstanceMethod("send", &InjectorWrap::Send), InstanceMethod("close", &InjectorWrap::Close)});
  }

  // new NativeInjector({ protocol, groupId, netns })
  explicit InjectorWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<InjectorWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw_invalid(env, "NativeInjector(options)");
    const Napi::Object o = info[0].As<Napi::Object>();
    SetupError error;
    injector_ = Injector::open(parse_protocol(env, get_string(o, "protocol")), get_u32(o, "groupId", 0),
                               get_string(o, "netns"), error);
    if (!injector_) throw_setup_error(env, error);
  }

 private:
  // send(bytes: Uint8Array)
  void Send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray()) throw_invalid(env, "send(bytes: Uint8Array)");
    Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
    int err = injector_->send(bytes.Data(), bytes.ByteLength());
    if (err != 0) throw_setup_error(env, setup_error("SEND_FAILED", describe_errno("netlink send failed", err), err));
  }

  void Close(const Napi::CallbackInfo&) { injector_->close(); }

  std::unique_ptr<Injector> injector_;
};

// decode(bytes: Uint8Array, familyId: number, stats: Float64Array(abi.stats.length)) -> [buffer, count]
// stats gets what the parser counted (malformed, foreign, ...) and the control messages.
Napi::Value Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "decode(bytes: Uint8Array, familyId: number, stats: Float64Array(abi.stats.length))";
  if (!info[0].IsTypedArray() || !info[1].IsNumber()) throw_invalid(env, usage);
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  const auto family_id = static_cast<uint16_t>(info[1].As<Napi::Number>().Uint32Value());
  Napi::Float64Array out_stats = stats_argument(info[2], usage);
  std::vector<Message> messages;
  ovnpsample::Stats stats{};
  parse_datagram(bytes.Data(), bytes.ByteLength(), family_id, messages, stats);
  SampleBatch batch;
  for (const Message& m : messages) {
    if (m.kind == MessageKind::kSample || m.kind == MessageKind::kGroup)
      batch.append(m, bytes.Data(), false, 0);
    else
      stats[kControlMessages]++;
  }
  write_stats(stats, out_stats);
  Napi::Array out = Napi::Array::New(env);
  push_batch(env, out, batch);
  return out;
}

// detachBuffer(buffer: ArrayBuffer): frees a delivered batch's bytes now. V8 learns of an
// ArrayBuffer's memory only as external memory that a garbage collection frees; a consumer that
// allocates little else between hand-offs lets batches pile up until that memory forces a full
// collection of the whole heap (the OVN mirrors included). Detached, the bytes go at once.
void DetachBuffer(const Napi::CallbackInfo& info) {
  if (!info[0].IsArrayBuffer()) throw_invalid(info.Env(), "detachBuffer(buffer: ArrayBuffer)");
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  if (!buffer.IsDetached()) buffer.Detach();
}

Napi::Value ThreadReport(Napi::Env env, const ThreadCredentials& t) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("tid", Napi::Number::New(env, t.tid));
  o.Set("name", Napi::String::New(env, t.name));
  const std::pair<const char*, uint64_t> sets[] = {{"inheritable", t.inheritable},
                                                   {"permitted", t.permitted},
                                                   {"effective", t.effective},
                                                   {"bounding", t.bounding},
                                                   {"ambient", t.ambient}};
  for (const auto& [name, value] : sets) o.Set(name, Napi::BigInt::New(env, value));
  return o;
}

// dropPrivileges({ user?: string, group?: string }) -> report (native/privileges/privileges.h)
Napi::Value DropPrivileges(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw_invalid(env, "dropPrivileges({ user?, group? })");
  const Napi::Object o = info[0].As<Napi::Object>();
  PrivilegeReport report;
  if (SetupError error = drop_privileges({get_string(o, "user"), get_string(o, "group")}, report); error.failed())
    throw_setup_error(env, error);
  Napi::Object out = Napi::Object::New(env);
  out.Set("switchedUser", Napi::Boolean::New(env, report.switched_user));
  out.Set("uid", Napi::Number::New(env, report.uid));
  out.Set("gid", Napi::Number::New(env, report.gid));
  Napi::Array groups = Napi::Array::New(env, report.groups.size());
  for (uint32_t i = 0; i < report.groups.size(); i++) groups.Set(i, Napi::Number::New(env, report.groups[i]));
  out.Set("groups", groups);
  out.Set("boundingCleared", Napi::Boolean::New(env, report.bounding_cleared));
  if (!report.bounding_kept_because.empty())
    out.Set("boundingKeptBecause", Napi::String::New(env, report.bounding_kept_because));
  out.Set("threads", Napi::Number::New(env, report.threads));
  Napi::Array unreached = Napi::Array::New(env, report.unreached.size());
  for (uint32_t i = 0; i < report.unreached.size(); i++) unreached.Set(i, ThreadReport(env, report.unreached[i]));
  out.Set("unreachedThreads", unreached);
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // DefineClass makes constructors of this environment only: nothing is shared across workers.
  exports.Set("NativeReader", ReaderWrap::Define(env));
  exports.Set("NativeInjector", InjectorWrap::Define(env));
  exports.Set("decode", Napi::Function::New(env, Decode, "decode"));
  exports.Set("detachBuffer", Napi::Function::New(env, DetachBuffer, "detachBuffer"));
  exports.Set("LineRenderer", define_line_renderer(env));
  exports.Set("EventJsonWriter", define_event_json_writer(env));
  exports.Set("HumanLineWriter", define_human_line_writer(env));
  exports.Set("NativeFlowTable", define_flow_table(env));
  exports.Set("NativeWatchLines", define_watch_lines(env));
  exports.Set("dropPrivileges", Napi::Function::New(env, DropPrivileges, "dropPrivileges"));
  exports.Set("abi", describe_abi(env));
  export_packet_forms(env, exports);
  return exports;
}

}  // namespace

}  // namespace ovnpsample

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return ovnpsample::Init(env, exports); }

NODE_API_MODULE(ovn_psample, InitAddon)
