import BenchmarkHarness
import Foundation

/// Every benchmark case, built for full or `--quick` sizes.
func allBenchmarks(quick: Bool) -> [Benchmark] {
    ProgressBenchmarks.cases(quick: quick) + GesturesBenchmarks.cases(quick: quick)
        + PlayerBenchmarks.cases(quick: quick) + HLSBenchmarks.cases(quick: quick)
        + DownloadBenchmarks.cases(quick: quick) + ContainerBenchmarks.cases(quick: quick)
        + CatalogBenchmarks.cases(quick: quick) + QueueBenchmarks.cases(quick: quick)
}

func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// A child process measuring one hostile input's memory (see HostileInputMemory).
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--memory-probe" {
    exit(HostileInputMemory.runProbe(named: CommandLine.arguments[2], size: Int(CommandLine.arguments[3]) ?? 0))
}

let options: BenchmarkOptions
do {
    options = try BenchmarkOptions(arguments: CommandLine.arguments.dropFirst())
} catch {
    writeStandardError(String(describing: error))
    exit(2)
}

if options.showHelp {
    print(BenchmarkOptions.usage)
    exit(0)
}
if BenchmarkRunner.isDebugBuild {
    writeStandardError(BenchmarkRunner.debugBuildWarning)
}

let cases = allBenchmarks(quick: options.quick)
if options.listOnly {
    for benchmark in cases where options.selects(benchmark.qualifiedName) {
        print(benchmark.qualifiedName)
    }
    exit(0)
}

print("MediaCore benchmarks (\(options.quick ? "quick" : "full") sizes, \(options.sampleCount) samples per side)")
print("Times are per run of the named work; speed-up = baseline median ÷ MediaCore median.\n")
let runner = BenchmarkRunner(options: options)
let results = runner.run(cases) { result in
    print("  measured \(result.group)/\(result.name)")
}
QueueBenchmarks.removeFiles()
print("")
print(ResultTable.render(results))
if options.selects("Downloads/memory") {
    print("")
    DownloadBenchmarks.reportMemoryBound(quick: options.quick)
}
if options.selects("Downloads/pipeline cost") {
    print("")
    PipelineCost.report(quick: options.quick)
}
if options.selects("Hostile/memory") {
    print("")
    HostileInputMemory.report(quick: options.quick)
}

if results.isEmpty && !options.selects("Downloads/memory") && !options.selects("Downloads/pipeline cost")
    && !options.selects("Hostile/memory")
{
    writeStandardError("No benchmark matches the filter \(options.filters). Use --list to see the names.")
    exit(1)
}
if let path = options.jsonPath {
    do {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: path), options: .atomic)
        print("\nWrote \(results.count) results to \(path)")
    } catch {
        writeStandardError("Could not write \(path): \(error)")
        exit(1)
    }
}
let missed = results.filter { $0.meetsTarget == false }
if !missed.isEmpty {
    let names = missed.map { "\($0.group)/\($0.name)" }.joined(separator: ", ")
    print(
        "\nMissed targets: \(names)\(options.quick ? " (quick sizes are too small for the targets to be meaningful)" : "")"
    )
    if options.checkTargets { exit(1) }
}
