// swift-tools-version:6.0
// The benchmark harness: a package of its own, so the test command never builds it.
import PackageDescription

let package = Package(
  name: "taskrun-benchmarks",
  products: [
    .executable(name: "bench", targets: ["bench"]),
    // Preloaded into taskrun and make to read their own CPU time apart from their commands'.
    .library(name: "OwnCPU", type: .dynamic, targets: ["OwnCPU"])
  ],
  dependencies: [.package(name: "taskrun", path: "..")],
  targets: [
    .executableTarget(
      name: "bench",
      dependencies: [.product(name: "TaskEngine", package: "taskrun")],
      path: "Sources/bench"),
    .target(name: "OwnCPU", path: "Sources/OwnCPU")
  ],
  swiftLanguageModes: [.v6]
)
