// swift-tools-version:6.0
// The benchmark harness: a package of its own, so the test command never builds it.
import PackageDescription

let package = Package(
  name: "taskrun-benchmarks",
  dependencies: [.package(name: "taskrun", path: "..")],
  targets: [
    .executableTarget(
      name: "bench",
      dependencies: [.product(name: "TaskEngine", package: "taskrun")],
      path: "Sources/bench"),
  ],
  swiftLanguageModes: [.v6]
)
