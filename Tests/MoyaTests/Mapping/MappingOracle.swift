import Foundation
import Testing

@testable import Moya

/// Compares key-path mapping with the algorithm it replaced, which is kept in the library
/// (``Response/mapUsingJSONSerialization(_:atKeyPath:using:failsOnEmptyData:)`` and
/// ``Response/mapStringUsingJSONSerialization(atKeyPath:)``): the whole body parsed with
/// `JSONSerialization`, the key path walked, the value written back to JSON and decoded.
enum MappingOracle {
    /// Maps `data` at `keyPath` both ways, expects the same value or the same error, and returns
    /// what the new way gave.
    @discardableResult
    static func expectSameMap<Value: Decodable & Equatable>(
        _ type: Value.Type,
        _ data: Data,
        atKeyPath keyPath: String,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> MappingResult<Value> {
        let new = MappingResult(data: data) { try $0.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData) }
        let old = MappingResult(data: data) {
            try $0.mapUsingJSONSerialization(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData)
        }
        #expect(
            new == old, "map(\(type), atKeyPath: \(keyPath.debugDescription), failsOnEmptyData: \(failsOnEmptyData)) of \(Self.show(data))",
            sourceLocation: sourceLocation)
        return new
    }

    /// Maps `data` to the string at `keyPath` both ways, expects the same string or the same
    /// error, and returns what the new way gave.
    @discardableResult
    static func expectSameMapString(_ data: Data, atKeyPath keyPath: String, sourceLocation: SourceLocation = #_sourceLocation) -> MappingResult<String> {
        let new = MappingResult(data: data) { try $0.mapString(atKeyPath: keyPath) }
        let old = MappingResult(data: data) { try $0.mapStringUsingJSONSerialization(atKeyPath: keyPath) }
        #expect(new == old, "mapString(atKeyPath: \(keyPath.debugDescription)) of \(Self.show(data))", sourceLocation: sourceLocation)
        return new
    }

    /// Whether two values `JSONSerialization` made are the same JSON value: the same kind, the
    /// same strings and numbers, the same members. Not by writing both with `.sortedKeys`: on
    /// Linux that option does not always sort keys that share a long run of punctuation, and
    /// writes equal objects in different orders.
    static func sameJSON(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let a as [String: Any], let b as [String: Any]):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { sameJSON(value, $0) } ?? false }
        case (let a as [Any], let b as [Any]):
            return a.count == b.count && zip(a, b).allSatisfy { sameJSON($0, $1) }
        case (let a as String, let b as String):
            return Array(a.utf8) == Array(b.utf8)
        case (is NSNull, is NSNull):
            return true
        case (let a as NSNumber, let b as NSNumber):
            return a.isBoolean == b.isBoolean && a.isEqual(b)
        default:
            return false
        }
    }

    /// The body for a failure message: its text, or its bytes when it is not UTF-8.
    static func show(_ data: Data) -> String {
        let text = String(data: data.prefix(2_000), encoding: .utf8) ?? "\(Array(data.prefix(2_000)))"
        return data.count > 2_000 ? "\(text.debugDescription)… (\(data.count) bytes)" : text.debugDescription
    }
}
