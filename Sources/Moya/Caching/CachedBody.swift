import Foundation

/// Where a stored response's content is: in memory, or in an ``HTTPCacheStorage`` that streams
/// it (all of it, or the part a range request asked for).
enum CachedBody: Sendable {
    /// The content itself.
    case data(Data)
    /// The content of `record` in the cache's storage: its bytes in `range` (offsets into the
    /// stored body), or all of them when `range` is `nil`.
    case stored(HTTPCacheRecord, range: Range<Int64>?)

    /// The content's length in bytes.
    var count: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .stored(let record, let range): range.map { $0.upperBound - $0.lowerBound } ?? record.bodyLength
        }
    }

    /// The part of the content in `range` (offsets into this content).
    func slice(_ range: Range<Int64>) -> CachedBody {
        switch self {
        case .data(let data):
            let start = data.startIndex
            return .data(data.subdata(in: (start + Int(range.lowerBound))..<(start + Int(range.upperBound))))
        case .stored(let record, let current):
            let base = current?.lowerBound ?? 0
            return .stored(record, range: (base + range.lowerBound)..<(base + range.upperBound))
        }
    }
}
