{
  "targets": [
    {
      "target_name": "ovn_psample",
      "sources": [
        "native/abi.cc",
        "native/addon.cc",
        "native/addon_packet.cc",
        "native/addon_render.cc",
        "native/datagram_policy.cc",
        "native/every_thread.cc",
        "native/family_follow.cc",
        "native/genl_family.cc",
        "native/group_filter.cc",
        "native/injector.cc",
        "native/netns.cc",
        "native/packet_decoder.cc",
        "native/packet_json.cc",
        "native/packet_text.cc",
        "native/privileges.cc",
        "native/psample_parser.cc",
        "native/psample_socket.cc",
        "native/reader.cc",
        "native/sample_batch.cc",
        "native/sample_json.cc",
        "native/sample_lines.cc",
        "native/sample_text.cc",
        "native/setup_error.cc",
        "native/thread_credentials.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-O2", "-fvisibility=hidden"],
      "ldflags": ["-Wl,-Bsymbolic-functions"]
    }
  ]
}
