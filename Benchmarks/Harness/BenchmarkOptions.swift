/// The command-line options of the `benchmarks` executable.
public struct BenchmarkOptions: Equatable, Sendable {
    /// Why the arguments could not be understood.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// An option the runner does not know.
        case unknownOption(String)
        /// An option that needs a value was last.
        case missingValue(option: String)
        /// An option's value is not a positive whole number.
        case invalidNumber(option: String, value: String)

        /// A sentence saying which argument was wrong.
        public var description: String {
            switch self {
            case .unknownOption(let option): "Unknown option '\(option)'. \(BenchmarkOptions.usage)"
            case .missingValue(let option): "The option '\(option)' needs a value. \(BenchmarkOptions.usage)"
            case .invalidNumber(let option, let value):
                "The option '\(option)' takes a positive whole number, not '\(value)'."
            }
        }
    }

    /// The usage line printed with errors and for `--help`.
    public static let usage =
        "Usage: benchmarks [FILTER…] [--quick] [--samples N] [--json PATH] [--check-targets] [--list]"

    /// Substrings of which a case's qualified name must contain one (case-insensitive); empty runs all.
    public var filters: [String] = []
    /// Small sizes and few samples, for CI.
    public var quick = false
    /// The number of timed samples per side, or `nil` for the default (3 quick, 15 otherwise).
    public var samples: Int?
    /// Where to write the figures as JSON, if anywhere.
    public var jsonPath: String?
    /// Exit with a failure status when a case misses its target.
    public var checkTargets = false
    /// List the cases instead of running them.
    public var listOnly = false
    /// Print the usage and exit.
    public var showHelp = false

    /// Creates the default options: every case, full sizes.
    public init() {}

    /// Parses the arguments after the executable's name.
    ///
    /// - Throws: ``ParseError`` for an unknown option or a missing or invalid value.
    public init(arguments: some Sequence<String>) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--check-targets": checkTargets = true
            case "--list": listOnly = true
            case "--help", "-h": showHelp = true
            case "--json":
                guard let path = iterator.next() else { throw ParseError.missingValue(option: argument) }
                jsonPath = path
            case "--samples":
                guard let text = iterator.next() else { throw ParseError.missingValue(option: argument) }
                guard let count = Int(text), count > 0 else {
                    throw ParseError.invalidNumber(option: argument, value: text)
                }
                samples = count
            default:
                if argument.hasPrefix("-") { throw ParseError.unknownOption(argument) }
                filters.append(argument)
            }
        }
    }

    /// The number of timed samples each side of a case gets.
    public var sampleCount: Int { samples ?? (quick ? 3 : 15) }

    /// Whether the filters select the case named `qualifiedName`.
    public func selects(_ qualifiedName: String) -> Bool {
        filters.isEmpty || filters.contains { qualifiedName.lowercased().contains($0.lowercased()) }
    }
}
