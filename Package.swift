// swift-tools-version: 6.1
import PackageDescription

/// Upcoming language features every MediaCore target opts into.
///
/// - `ExistentialAny`: every existential is spelled `any P`, so its cost is visible.
/// - `MemberImportVisibility`: a file sees only the members of modules it imports itself.
/// - `InternalImportsByDefault`: an `import` is internal unless written `public import`, so the
///   modules a public API exposes are stated, not implied.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "MediaCore",
    platforms: [.iOS(.v17), .macOS(.v14)],
    products: [
        .library(name: "Catalog", targets: ["Catalog"]),
        .library(name: "Progress", targets: ["Progress"]),
        .library(name: "Player", targets: ["Player"]),
        .library(name: "Gestures", targets: ["Gestures"]),
        .library(name: "SliderFlow", targets: ["SliderFlow"]),
        .library(name: "HLS", targets: ["HLS"]),
        .library(name: "Downloads", targets: ["Downloads"]),
        .library(name: "OfflineLessons", targets: ["OfflineLessons"]),
        .library(name: "OfflineLessonsTesting", targets: ["OfflineLessonsTesting"]),
        .library(name: "MediaContainers", targets: ["MediaContainers"]),
        .library(name: "HTTPSupport", targets: ["HTTPSupport"]),
        .executable(name: "benchmarks", targets: ["benchmarks"]),
    ],
    targets: [
        // MARK: Libraries
        .target(name: "Catalog", dependencies: ["HTTPSupport", "Locking"], swiftSettings: upcomingFeatures),
        .target(name: "Progress", dependencies: ["DecimalFormatting"], swiftSettings: upcomingFeatures),
        .target(
            name: "Player", dependencies: ["Downloads", "OfflineLessons", "Progress"], swiftSettings: upcomingFeatures),
        .target(name: "Gestures", swiftSettings: upcomingFeatures),
        .target(name: "SliderFlow", dependencies: ["HTTPSupport"], swiftSettings: upcomingFeatures),
        // HLS playlists: parse, write, resolve URIs, choose renditions. Imports only Foundation
        // (and the package-internal decimal formatting it shares with Progress).
        .target(name: "HLS", dependencies: ["DecimalFormatting"], swiftSettings: upcomingFeatures),
        // The download engine, its jobs, staging files and journal, HLS download planning and
        // the lesson pipeline: this URL or HLS lesson, into one file, resumable.
        .target(
            name: "Downloads", dependencies: ["HLS", "HTTPSupport", "Locking", "MediaContainers"],
            swiftSettings: upcomingFeatures),
        // Lessons kept offline for an app: the offline library, the course queue, background
        // transfers and their screen models, over the Downloads engine.
        .target(
            name: "OfflineLessons", dependencies: ["Downloads", "HTTPSupport", "Locking"],
            swiftSettings: upcomingFeatures),
        // Media containers in pure Swift: MPEG-TS demuxing, ADTS and ID3 reading, MP4 writing.
        .target(name: "MediaContainers", swiftSettings: upcomingFeatures),
        // The HTTP vocabulary shared by the modules that talk to servers: one transport
        // protocol, the URLSession adapter with cancellation, one timed send on an injected
        // clock, one retry loop.
        .target(name: "HTTPSupport", dependencies: ["Locking"], swiftSettings: upcomingFeatures),
        // Plain decimal text for Doubles, shared by HLS and Progress; package-internal, no product.
        .target(name: "DecimalFormatting", swiftSettings: upcomingFeatures),
        // The one lock type the modules share; package-internal, no product.
        .target(name: "Locking", swiftSettings: upcomingFeatures),

        // MARK: Tests
        // A testing library, a product for apps' tests: the system's background transfer daemon,
        // simulated, so that an app's tests (and the package's) drive its background wiring on
        // any machine. Not a module of the graph: no module imports it.
        .target(
            name: "OfflineLessonsTesting", dependencies: ["Downloads", "HTTPSupport", "Locking", "OfflineLessons"],
            swiftSettings: upcomingFeatures),
        // Test helpers, and the HLS lessons made with ffmpeg that several test targets serve
        // (Lessons/README.md says how each was made).
        .target(
            name: "TestSupport", dependencies: ["HTTPSupport"], path: "Tests/TestSupport",
            exclude: ["Lessons/README.md", "Lessons/make-media-fixtures.sh", "Lessons/tools"],
            resources: [.copy("Lessons")], swiftSettings: upcomingFeatures),
        .testTarget(
            name: "TestSupportTests",
            dependencies: ["TestSupport", "HTTPSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "CatalogTests",
            dependencies: ["Catalog", "HTTPSupport", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "ProgressTests",
            dependencies: ["Progress", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "PlayerTests",
            // AppleExamples: the documentation's screens, tested where SwiftUI exists.
            dependencies: [
                "Player", "Downloads", "OfflineLessons", "HLS", "Progress", "HTTPSupport", "TestSupport",
                "AppleExamples",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HLSTests",
            dependencies: ["HLS", "DecimalFormatting", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "MediaContainersTests",
            dependencies: ["MediaContainers", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "DownloadsTests",
            dependencies: [
                "Downloads", "OfflineLessons", "OfflineLessonsTesting", "HLS", "HTTPSupport", "MediaContainers",
                "TestSupport",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GesturesTests",
            dependencies: ["Gestures", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "SliderFlowTests",
            dependencies: ["SliderFlow", "HTTPSupport", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "HTTPSupportTests",
            dependencies: ["HTTPSupport", "TestSupport"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(name: "ArchitectureTests", dependencies: ["TestSupport"], swiftSettings: upcomingFeatures),
        .testTarget(
            name: "BenchmarkHarnessTests",
            dependencies: ["BenchmarkHarness"],
            swiftSettings: upcomingFeatures
        ),

        // MARK: Examples
        // The Apple-only examples of the README and the DocC articles (SwiftUI screens, the
        // AVFoundation wiring), each file under `#if canImport(…)`: the Apple check type-checks
        // them for iOS and macOS, and on Linux the target is empty. No product exports it.
        .target(
            name: "AppleExamples",
            dependencies: ["Downloads", "Gestures", "OfflineLessons", "Player", "Progress", "SliderFlow"],
            swiftSettings: upcomingFeatures),

        // MARK: Benchmarks
        .target(name: "BenchmarkHarness", path: "Benchmarks/Harness", swiftSettings: upcomingFeatures),
        // The benchmarks' allocation counter (C): it defines the process's allocation functions
        // and hands each to glibc's own; Linux with glibc only, and never under a sanitizer.
        .target(name: "AllocationCounting", path: "Benchmarks/AllocationCounting"),
        .executableTarget(
            name: "benchmarks",
            dependencies: [
                "AllocationCounting", "BenchmarkHarness", "Progress", "Gestures", "Player", "HLS", "Downloads",
                "OfflineLessons",
                "MediaContainers", "Catalog",
                "SliderFlow",
                "HTTPSupport", "TestSupport",
            ],
            path: "Benchmarks/Runner",
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
