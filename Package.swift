// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tonearm",
    products: [
        .executable(name: "tonearmd", targets: ["tonearmd"]),
        .executable(name: "tonearm", targets: ["tonearm"]),
        .executable(name: "tonearm-video", targets: ["tonearm-video"]),
        .executable(name: "tonearm-engine", targets: ["tonearm-engine"]),
        .library(name: "TonearmClient", targets: ["TonearmClient"]),
        .library(name: "PlayerModel", targets: ["PlayerModel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // C at the edges: system libraries from Debian's -dev packages, each with a header of
        // static inline shims for what Swift cannot import (variadics, macros).
        .systemLibrary(
            name: "CGStreamer", pkgConfig: "gstreamer-pbutils-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]),
        .systemLibrary(
            name: "CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),
        // SDL2, for tonearm-video's window only (tonearmd never links it)
        .systemLibrary(
            name: "CSDL2", pkgConfig: "sdl2",
            providers: [.apt(["libsdl2-dev"])]),
        // libpulse, for the sound server's default sink (the engine only: GStreamer 1.22's pulse
        // device provider never follows it), opened with dlopen where it is used (tonearm_pulse.h);
        // its header comes from libpulse-dev
        .target(name: "CPulse"),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // The C library's calls that Swift's Glibc module does not import (statx, eventfd,
        // pthread_setname_np, mallopt, malloc_trim, the ASan hook): one C function per gap.
        .target(name: "CShims"),
        // The engine's seccomp filter, a BPF program built in C (no libseccomp): what the engine
        // takes away from itself before it reads media (docs/sandbox.md).
        .target(name: "CSandbox"),
        // What runs inside GStreamer's streaming threads, in C: a typefinder, two pad probes, a
        // deep-notify handler.
        .target(name: "CGStreamerCallbacks", dependencies: ["CGStreamer"]),

        // What the programs took from Foundation beyond FoundationEssentials, in plain Swift: locks,
        // a condition and threads over pthreads, path and text helpers, natural order. With it no
        // target links Foundation proper, and so neither ICU's data nor FoundationInternationalization.
        .target(name: "Basics", dependencies: ["CSandbox", "CShims"]),

        // One reader of command lines, tonearmd's and tonearm-engine's: a table of options, its parse,
        // its help, completions and man page input (swift-argument-parser's parse cost tonearmd's
        // start ~5 ms; the CLI keeps swift-argument-parser).
        .target(name: "CommandLineOptions", dependencies: ["Basics"]),

        // Thin Swift wrappers: no policy.
        .target(name: "GStreamer", dependencies: ["Basics", "CGStreamer", "CGStreamerCallbacks"]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "PulseAudio", dependencies: ["CPulse"]),
        .target(name: "DBus", dependencies: ["Basics", "CDBus", "CShims", .product(name: "Logging", package: "swift-log")]),

        // The player model: pure Swift, no C.
        .target(name: "PlayerModel", dependencies: ["Basics"]),

        // What tonearmd knows of the engine without GStreamer: its configuration, the formats it
        // plays (and their cache), the checks and walks of local files, the allocator's settings,
        // and the engine's process (tonearm-engine) behind the model's engine protocol.
        .target(name: "EngineLink", dependencies: ["Basics", "CommandLineOptions", "PlayerModel", .product(name: "Logging", package: "swift-log")]),

        // The GStreamer engine behind the model's engine protocol, in tonearm-engine's process.
        .target(
            name: "PlayerEngine",
            dependencies: ["Basics", "EngineLink", "GStreamer", "PlayerModel", "PulseAudio", .product(name: "Logging", package: "swift-log")]),
        // The engine's process: tonearmd starts it when something needs GStreamer (ARCHITECTURE.md, "How it runs").
        .executableTarget(
            name: "tonearm-engine",
            dependencies: ["Basics", "EngineLink", "PlayerEngine", "PlayerModel", .product(name: "Logging", package: "swift-log")]),

        // Playlist files (M3U, M3U8, PLS, XSPF) and the folders that hold them, watched with inotify.
        .target(name: "Playlists", dependencies: ["Basics", "PlayerModel", .product(name: "Logging", package: "swift-log")]),

        // The saved state (resume after a restart): SQLite through a thin wrapper, and what the
        // player's events become in it; also what is remembered of the playlists (their records).
        .target(
            name: "Store",
            dependencies: ["Basics", "SQLite", "PlayerModel", "Playlists", .product(name: "Logging", package: "swift-log")]),

        // MPRIS adapter: org.mpris.* and io.github.tonearm.Player1 over the model.
        .target(
            name: "MPRIS",
            dependencies: ["Basics", "DBus", "PlayerModel", "Playlists", .product(name: "Logging", package: "swift-log")],
            // the introspection XML of dbus/ is compiled in, so Introspect answers with exactly it
            // surface.json: what tonearm-dbus(7) is made from (MPRISTests hold it to the tables)
            exclude: ["dbus/org.mpris.MediaPlayer2.tonearm.service", "dbus/surface.json"],
            resources: [
                .embedInCode("dbus/org.mpris.MediaPlayer2.xml"),
                .embedInCode("dbus/org.mpris.MediaPlayer2.Player.xml"),
                .embedInCode("dbus/org.mpris.MediaPlayer2.TrackList.xml"),
                .embedInCode("dbus/org.mpris.MediaPlayer2.Playlists.xml"),
                .embedInCode("dbus/io.github.tonearm.Player1.xml"),
            ]),

        // A client of a running tonearmd: typed MPRIS and extension calls over DBus. The CLI and
        // tonearmd --open use it; it knows nothing of the player's internals.
        .target(name: "TonearmClient", dependencies: ["Basics", "DBus", .product(name: "Logging", package: "swift-log")]),

        // The video window: a thin wrapper over SDL2, and the small program tonearmd starts to show
        // video in a window of its own (docs/video.md).
        .target(name: "SDLWindow", dependencies: ["CSDL2"]),
        .executableTarget(name: "tonearm-video", dependencies: ["Basics", "SDLWindow"]),

        // The command-line client: parses and prints, all D-Bus work is TonearmClient's.
        .executableTarget(
            name: "tonearm",
            dependencies: [
                "Basics", "TonearmClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // The service made of the parts above: its start, its lifecycle (signals, Quit, a lost bus),
        // the sleep watch and memory trimming. tonearmd only parses options and starts it.
        .target(
            name: "TonearmService",
            dependencies: [
                "Basics", "CommandLineOptions", "DBus", "EngineLink", "MPRIS", "PlayerModel", "Playlists", "Store",
                .product(name: "Logging", package: "swift-log"),
            ]),

        .executableTarget(
            name: "tonearmd",
            dependencies: [
                "Basics", "DBus", "EngineLink", "TonearmClient", "TonearmService",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Test support: the scripted engine, the media generator, the private bus.
        .target(name: "TestSupport", dependencies: ["PlayerModel"], path: "Tests/TestSupport"),
        .testTarget(name: "BasicsTests", dependencies: ["Basics"]),
        .testTarget(name: "CommandLineOptionsTests", dependencies: ["CommandLineOptions"]),
        .testTarget(name: "PlayerModelTests", dependencies: ["PlayerModel", "TestSupport"]),
        .testTarget(
            name: "PlayerEngineTests",
            dependencies: ["EngineLink", "PlayerEngine", "PlayerModel", "GStreamer", "TestSupport"],
            // the engine link's golden lines, read by EngineWireGoldenTests from the source tree
            exclude: ["EngineWire.golden"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        // tonearmd driven by real clients; DBus only for the one call they cannot make (no interface field),
        // EngineLink for the lists of what a spawned program may see (SpawnConfinementTests)
        .testTarget(
            name: "ServiceTests",
            dependencies: ["TestSupport", "DBus", "EngineLink", .product(name: "Logging", package: "swift-log")]),
        // the targets' imports and pointers, held against ARCHITECTURE.md's table (reads the sources)
        .testTarget(name: "ArchitectureTests"),
        // README.md, docs/ and the man pages' sources against the code: the names they use exist, and
        // what exists is described (runs the built tonearm and tonearmd for their parsers' help)
        .testTarget(name: "DocsTests", dependencies: ["TestSupport"]),
        .testTarget(name: "TonearmServiceTests", dependencies: ["TonearmService", "CommandLineOptions", "EngineLink", "PlayerModel", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "SQLite", "PlayerModel", "Playlists", "TestSupport"]),
        .testTarget(name: "PlaylistFileTests", dependencies: ["Playlists", "PlayerModel"]),
        // the built tonearm against a tonearmd on a private bus; TonearmClient for its pure parts (DBus
        // for the property values they take)
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "TonearmClient", "DBus"]),
        .testTarget(
            name: "MPRISTests",
            dependencies: ["MPRIS", "DBus", "PlayerModel", "TestSupport", .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
