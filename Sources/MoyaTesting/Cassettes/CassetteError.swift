import Foundation

/// What cassettes throw, and the error a replayed request fails with when the cassette holds
/// no answer for it.
///
/// A request the cassette cannot answer fails with
/// `MoyaError.underlying(CassetteError.noMatch(request:reason:), nil)`; its description names
/// the request, the closest recorded interaction and how the two differ.
public enum CassetteError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// No recorded interaction answers `request` (`GET https://api.example.com/users`);
    /// `reason` names the closest interaction and what differs, or says that the matching
    /// interactions were all used.
    case noMatch(request: String, reason: String)

    /// The cassette file is not a cassette: not JSON, a member missing or of the wrong type,
    /// a base64 body that does not decode. `reason` says where.
    case malformed(file: String, reason: String)

    /// The cassette file was written by a newer version of MoyaTesting: its `version` is
    /// `found`, this version reads up to `supported`.
    case unsupportedVersion(file: String, found: Int, supported: Int)

    /// The cassette file to replay does not exist (record it first).
    case missingFile(String)

    /// Writing the cassette file failed; `reason` is the system's error.
    case writeFailed(file: String, reason: String)

    /// The mode named in the environment variable `variable` is none of ``CassetteMode``'s.
    case unknownMode(variable: String, value: String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .noMatch(let request, let reason):
            return "Cassette: no recorded interaction matches \(request). \(reason)"
        case .malformed(let file, let reason):
            return "Cassette: \(file) is not a valid cassette: \(reason)"
        case .unsupportedVersion(let file, let found, let supported):
            return
                "Cassette: \(file) has format version \(found), but this MoyaTesting reads versions up to \(supported); update MoyaTesting or record it again"
        case .missingFile(let file):
            return "Cassette: \(file) does not exist; record it first (mode .record or .recordIfMissing, or \(CassetteMode.environmentVariable)=record)"
        case .writeFailed(let file, let reason):
            return "Cassette: could not write \(file): \(reason)"
        case .unknownMode(let variable, let value):
            return "Cassette: \(variable)=\(value) names no mode; use record, replay or recordIfMissing"
        }
    }

    /// The same as ``description``.
    public var errorDescription: String? { self.description }

    /// The key under which the `NSError` a replayed request first fails with carries the
    /// `CassetteError` (see ``CassettePlayer``).
    static let userInfoKey = "MoyaTesting.CassetteError"

    /// This error as an `NSError` for a stub's `.networkError`, carrying itself in its user
    /// info so that ``CassettePlayer`` can unwrap it again (Linux does not bridge an `NSError`
    /// back to a Swift error).
    var bridged: NSError {
        NSError(domain: "MoyaTesting.CassetteError", code: 1, userInfo: [NSLocalizedDescriptionKey: self.description, Self.userInfoKey: self])
    }
}
