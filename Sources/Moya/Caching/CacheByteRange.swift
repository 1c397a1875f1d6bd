import Foundation

/// The one byte range a request's `Range` header asks for (RFC 9110 §14.1.2), which the cache
/// answers from a complete stored response with `206 Partial Content`.
///
/// Only a single `bytes` range is answered from storage. Several ranges (a multipart answer), a
/// unit other than `bytes`, more than one `Range` field or a value that does not parse are left
/// to the server, as is a range the stored body cannot satisfy (the server answers `416`).
enum CacheByteRange: Equatable, Sendable {
    /// `first-last` or, without `last`, from `first` to the end.
    case from(UInt64, through: UInt64?)
    /// `-length`: the last `length` bytes.
    case suffix(UInt64)

    /// What a request's headers ask for.
    enum Request: Equatable, Sendable {
        /// No `Range` header.
        case none
        /// One byte range the cache can answer.
        case single(CacheByteRange)
        /// A range the cache leaves to the server.
        case other
    }

    /// The range `headers` ask for.
    static func requested(in headers: [(name: String, value: String)]) -> Request {
        let values = CacheHeaderFields.values("Range", in: headers)
        guard !values.isEmpty else { return .none }
        guard values.count == 1 else { return .other }
        return parse(values[0]).map(Request.single) ?? .other
    }

    /// Parses `bytes=first-last`, `bytes=first-` or `bytes=-length`, with optional whitespace
    /// around the range; `nil` for anything else.
    static func parse(_ value: String) -> CacheByteRange? {
        let trimmed = CacheHeaderFields.trim(value)
        guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals].lowercased() == "bytes" else { return nil }
        let spec = CacheHeaderFields.trim(trimmed[trimmed.index(after: equals)...])
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let length = digits(last), length > 0 else { return nil }
            return .suffix(length)
        }
        guard let start = digits(first) else { return nil }
        if last.isEmpty { return .from(start, through: nil) }
        guard let end = digits(last), end >= start else { return nil }
        return .from(start, through: end)
    }

    /// The offsets of the range in a body of `length` bytes, clamped to it; `nil` when the
    /// range does not overlap the body.
    func bounds(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        let size = UInt64(length)
        switch self {
        case .from(let first, let last):
            guard first < size else { return nil }
            return Int(first)...Int(min(last ?? size - 1, size - 1))
        case .suffix(let count):
            return Int(size - min(count, size))...(length - 1)
        }
    }

    /// A run of ASCII digits as a number; `nil` for anything else, or a number that does not fit.
    private static func digits(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
