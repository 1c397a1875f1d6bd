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

    /// The body for a failure message: its text, or its bytes when it is not UTF-8.
    static func show(_ data: Data) -> String {
        let text = String(data: data.prefix(2_000), encoding: .utf8) ?? "\(Array(data.prefix(2_000)))"
        return data.count > 2_000 ? "\(text.debugDescription)… (\(data.count) bytes)" : text.debugDescription
    }
}
