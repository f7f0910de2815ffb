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
        .library(name: "HTTPSupport", targets: ["HTTPSupport"]),
        .executable(name: "benchmarks", targets: ["benchmarks"]),
    ],
    targets: [
        // MARK: Libraries
        .target(name: "Catalog", dependencies: ["HTTPSupport"], swiftSettings: upcomingFeatures),
        .target(name: "Progress", swiftSettings: upcomingFeatures),
        .target(name: "Player", dependencies: ["Progress", "HTTPSupport"], swiftSettings: upcomingFeatures),
        .target(name: "Gestures", swiftSettings: upcomingFeatures),
        .target(name: "SliderFlow", dependencies: ["HTTPSupport"], swiftSettings: upcomingFeatures),
        // The HTTP vocabulary shared by the modules that talk to servers: the URLSession adapter
        // with cancellation, deadlines on an injected clock, retry backoff. Transports themselves
        // are plain function types, so any closure (or a test's fake) fits every module.
        .target(name: "HTTPSupport", swiftSettings: upcomingFeatures),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: upcomingFeatures),
        .testTarget(
            name: "TestSupportTests",
            dependencies: ["TestSupport"],
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
            dependencies: ["Player", "Progress", "HTTPSupport", "TestSupport"],
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
        .testTarget(
            name: "BenchmarkHarnessTests",
            dependencies: ["BenchmarkHarness"],
            swiftSettings: upcomingFeatures
        ),

        // MARK: Benchmarks
        .target(name: "BenchmarkHarness", path: "Benchmarks/Harness", swiftSettings: upcomingFeatures),
        .executableTarget(
            name: "benchmarks",
            dependencies: [
                "BenchmarkHarness", "Progress", "Gestures", "Player", "Catalog", "SliderFlow", "TestSupport",
            ],
            path: "Benchmarks/Runner",
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
