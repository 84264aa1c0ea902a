{
  # Sources: native/sources.json, the one list native/CMakeLists.txt reads too.
  "targets": [
    {
      "target_name": "ovn_psample",
      "sources": ["<!@(node -p \"const s = require('./native/sources.json'); [...s.pure, ...s.system, ...s.addon].map((f) => 'native/' + f).join(' ')\")"],
      "include_dirs": ["native", "<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-O2", "-fvisibility=hidden"],
      "ldflags": ["-Wl,-Bsymbolic-functions"]
    }
  ]
}
