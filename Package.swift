// swift-tools-version:6.0
import PackageDescription

/// PushFleet: a queue-backed push-notification worker fleet.
/// Module map and ownership rules: ../shared/DESIGN.md.
let package = Package(
    name: "PushFleet",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pushfleet", targets: ["pushfleet"]),
        .library(name: "PushProducer", targets: ["PushProducer"]),
        .library(name: "PushCore", targets: ["PushCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // C libraries: a module map and shim.h each; only their Swift wrapper imports them.
        .systemLibrary(
            name: "CRdKafka", pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(
            name: "CLibpq", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        // Typed wrappers for variadic and macro C APIs.
        .target(name: "CShims", dependencies: ["CCurl", "COpenSSL"]),
        // Bench support: libcurl's own floor, a minimal C loop for `bench send --floor`.
        .target(name: "CCurlFloor", dependencies: ["CCurl"]),

        // Pure logic: no I/O, no C, no threads.
        .target(name: "PushCore"),
        // Threads of our own: the send executor and kernel thread names (PushCore for `Locked`).
        .target(name: "PushThreads", dependencies: ["PushCore"]),

        .target(
            name: "PushKafka",
            dependencies: [
                "CRdKafka", "PushCore", "PushThreads", .product(name: "Logging", package: "swift-log"),
            ]),
        // The SQL migrations (schemas/postgres/*.sql, the one copy) compiled into PushPostgres
        // at build time, so the binary needs no repository: a build tool and the plugin that runs it.
        .executableTarget(name: "embed-migrations"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"],
                path: "Sources/EmbedMigrations"),
        .target(
            name: "PushPostgres",
            dependencies: [
                "CLibpq", "PushCore", "PushThreads", .product(name: "Logging", package: "swift-log"),
            ],
            plugins: ["EmbedMigrations"]),
        .target(
            name: "PushHTTP",
            dependencies: ["CCurl", "CShims", "PushThreads", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "PushProviders",
            dependencies: [
                "PushHTTP", "PushCore", "COpenSSL", "CShims",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "PushProducer",
            dependencies: ["PushKafka", "PushCore", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "PushWorker",
            dependencies: [
                "PushCore", "PushThreads", "PushKafka", "PushPostgres", "PushHTTP", "PushProviders",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // The analyst side: the report (queries, data, rendering) and partition upkeep.
        .target(
            name: "PushAnalytics",
            dependencies: ["PushCore", "PushPostgres", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "PushSimulator",
            dependencies: [
                "PushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "pushfleet",
            dependencies: [
                "PushCore", "PushThreads", "PushKafka", "PushPostgres", "PushHTTP", "PushProviders",
                "PushWorker", "PushAnalytics", "PushSimulator", "PushProducer", "CCurlFloor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]),

        // Helpers shared by the test targets (postgres-nio's ConnectionPoolTestUtils,
        // hummingbird's HummingbirdTesting): the fuzz mutator, the test environment
        // (PostgreSQL URL, the built binary, the repository's paths), a migrated
        // database, mock-cluster settings, the live simulator stack.
        .target(
            name: "PushTestSupport",
            dependencies: [
                "PushCore", "PushPostgres", "PushHTTP", "PushProviders", "PushSimulator",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PushTestSupport"),

        // Test targets mirror modules: `<Module>Tests` tests `<Module>`.
        // Tier 1: pure unit tests.
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "PushTestSupport"]),
        .testTarget(name: "PushThreadsTests", dependencies: ["PushThreads", "PushCore"]),
        // Tier 2: component tests against real local servers.
        .testTarget(
            name: "PushKafkaTests", dependencies: ["PushKafka", "PushCore", "PushProducer", "PushTestSupport"]),
        .testTarget(name: "PushPostgresTests", dependencies: ["PushPostgres", "PushCore", "PushTestSupport"]),
        .testTarget(
            name: "PushHTTPTests",
            dependencies: ["PushHTTP", "PushProviders", "PushSimulator", "PushCore", "PushTestSupport"]),
        .testTarget(
            name: "PushProvidersTests",
            dependencies: ["PushProviders", "PushHTTP", "PushSimulator", "PushCore", "PushTestSupport"]),
        .testTarget(name: "PushSimulatorTests", dependencies: ["PushSimulator", "PushCore"]),
        .testTarget(
            name: "PushWorkerTests",
            dependencies: [
                "PushWorker", "PushCore", "PushThreads", "PushPostgres", "PushKafka", "PushSimulator",
                "PushTestSupport", .product(name: "Metrics", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "PushAnalyticsTests", dependencies: ["PushAnalytics", "PushCore", "PushPostgres", "PushTestSupport"]),
        // Tier 3: end to end, running `pushfleet` processes.
        .testTarget(
            name: "PushFleetEndToEndTests",
            dependencies: ["PushCore", "PushPostgres", "PushKafka", "PushTestSupport"]),
    ]
)
