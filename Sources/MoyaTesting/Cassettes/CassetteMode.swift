import Foundation

/// Whether a cassette is recorded or replayed: the one switch to flip, in code or with the
/// environment variable ``environmentVariable``.
///
/// ```swift
/// // replay unless MOYA_CASSETTE_MODE says otherwise:
/// let provider = try MoyaProvider<GitHub>(cassette: cassetteURL, mode: .fromEnvironment())
/// ```
///
/// Record on your machine once (`MOYA_CASSETTE_MODE=record swift test`), commit the cassette,
/// and let CI replay it.
public enum CassetteMode: String, Sendable, CaseIterable {
    /// Send real requests and record them, replacing the cassette file.
    case record

    /// Answer from the cassette file, which must exist; nothing goes to the network.
    case replay

    /// Replay when the cassette file exists, record it otherwise.
    case recordIfMissing

    /// `MOYA_CASSETTE_MODE`, the environment variable ``fromEnvironment(default:environment:)``
    /// reads.
    public static let environmentVariable = "MOYA_CASSETTE_MODE"

    /// The mode the environment variable ``environmentVariable`` names (`record`, `replay` or
    /// `recordIfMissing`, in any case), or `default` when it is not set or empty.
    ///
    /// - Parameters:
    ///   - default:     The mode without the variable; ``replay`` by default, so that CI never
    ///     reaches the network by accident.
    ///   - environment: The environment; the process's by default.
    /// - Returns: The mode.
    /// - Throws: ``CassetteError/unknownMode(variable:value:)`` for any other value: a typo
    ///   should not quietly replay.
    public static func fromEnvironment(
        default: CassetteMode = .replay,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> CassetteMode {
        guard let value = environment[Self.environmentVariable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return `default`
        }
        guard let mode = Self.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(value) == .orderedSame }) else {
            throw CassetteError.unknownMode(variable: Self.environmentVariable, value: value)
        }
        return mode
    }

    /// Whether the cassette at `url` is to be recorded (`true`) or replayed (`false`).
    ///
    /// - Parameter url: The cassette file.
    /// - Returns: `true` for ``record``, and for ``recordIfMissing`` when there is no file.
    public func records(_ url: URL) -> Bool {
        switch self {
        case .record: return true
        case .replay: return false
        case .recordIfMissing: return !FileManager.default.fileExists(atPath: url.path)
        }
    }
}
