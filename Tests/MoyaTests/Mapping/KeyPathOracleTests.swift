import Foundation
import Testing

@testable import Moya

/// Key-path mapping of random documents, well-formed and not, against the `JSONSerialization`
/// algorithm it replaced: the same values, the same errors. `MOYA_FUZZ_ITERATIONS` and
/// `MOYA_FUZZ_SEED` give longer runs and other seeds.
@Suite("Key-path mapping agrees with the JSONSerialization algorithm on random documents")
struct KeyPathOracleTests {
    /// A decoder that converts snake_case keys, with ISO 8601 dates.
    private static func snakeCaseDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    @Test("Well-formed documents")
    func wellFormed() async {
        var generator = JSONDocumentGenerator(salt: 11)
        var found = 0
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 8, iteration)
            let data = generator.document(malformed: false)
            let keyPath = generator.keyPath()
            let failsOnEmptyData = generator.fuzz.bool()
            if case .value = MappingOracle.expectSameMap(AnyJSON.self, data, atKeyPath: keyPath, failsOnEmptyData: failsOnEmptyData) {
                found += 1
            }
            MappingOracle.expectSameMap(AnyJSON?.self, data, atKeyPath: keyPath, failsOnEmptyData: failsOnEmptyData)
            MappingOracle.expectSameMap([AnyJSON].self, data, atKeyPath: keyPath, failsOnEmptyData: failsOnEmptyData)
            MappingOracle.expectSameMap([String: AnyJSON].self, data, atKeyPath: keyPath, using: Self.snakeCaseDecoder())
            MappingOracle.expectSameMap(String.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMap(Int.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMap(Double.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMap(Bool.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMap(Decimal.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMapString(data, atKeyPath: keyPath)
        }
        // The documents are meant to exercise both outcomes.
        #expect(found > Fuzz.iterations / 5)
        #expect(found < Fuzz.iterations)
    }

    @Test("Malformed documents")
    func malformed() async {
        var generator = JSONDocumentGenerator(salt: 12)
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 8, iteration)
            let data = generator.document(malformed: true)
            let keyPath = generator.keyPath()
            MappingOracle.expectSameMap(AnyJSON.self, data, atKeyPath: keyPath, failsOnEmptyData: generator.fuzz.bool())
            MappingOracle.expectSameMap(String.self, data, atKeyPath: keyPath)
            MappingOracle.expectSameMapString(data, atKeyPath: keyPath)
        }
    }

    @Test("The scanner accepts only what JSONSerialization accepts, and finds what the key path walk finds")
    func scannerAgreesWithJSONSerialization() async throws {
        var generator = JSONDocumentGenerator(salt: 13)
        var accepted = 0
        for iteration in 0..<(2 * Fuzz.iterations) {
            await yieldNow(every: 16, iteration)
            let data = generator.document(malformed: iteration % 2 == 1)
            let keyPath = generator.keyPath()
            let outcome = data.withUnsafeBytes { JSONKeyPathScanner.lookUp(JSONKeyPath(keyPath), in: $0) }
            guard outcome != .unsupported else { continue }
            accepted += 1
            let json = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
            guard let json else {
                Issue.record("the scanner accepted \(MappingOracle.show(data)), which JSONSerialization refuses")
                continue
            }
            let walked = (json as? [String: Any]).flatMap { JSONKeyPath(keyPath).value(in: $0) }
            switch outcome {
            case .notADictionary:
                #expect(!(json is [String: Any]), "\(MappingOracle.show(data))")
            case .notFound:
                #expect(json is [String: Any] && walked == nil, "\(keyPath.debugDescription) in \(MappingOracle.show(data))")
            case .found(let range, _):
                // The bytes found parse to the value the walk finds.
                let value = try JSONSerialization.jsonObject(with: data[range], options: .fragmentsAllowed)
                #expect(
                    walked.map { MappingOracle.sameJSON(value, $0) } ?? false,
                    "\(keyPath.debugDescription) in \(MappingOracle.show(data)): \(value) against \(String(describing: walked))")
            case .unsupported:
                break
            }
        }
        #expect(accepted > Fuzz.iterations / 2)
    }

    @Test("The oracle's comparison of JSON values: equal objects whatever their keys' order, and any difference found")
    func sameJSON() throws {
        // Keys sharing a long run of punctuation, which `.sortedKeys` writes in either order on Linux.
        let run = String(repeating: "!", count: 70)
        let one = try JSONSerialization.jsonObject(with: Data("{\"\(run)6\":1,\"\(run)!\":[true,null,\"x\"]}".utf8))
        let two = try JSONSerialization.jsonObject(with: Data("{\"\(run)!\":[true,null,\"x\"],\"\(run)6\":1}".utf8))
        #expect(MappingOracle.sameJSON(one, two))
        let others = [
            "{\"\(run)6\":1,\"\(run)!\":[true,null,\"y\"]}", "{\"\(run)6\":true,\"\(run)!\":[true,null,\"x\"]}",
            "{\"\(run)6\":1,\"\(run)!\":[1,null,\"x\"]}", "{\"\(run)6\":1}", "{\"\(run)7\":1,\"\(run)!\":[true,null,\"x\"]}",
        ]
        for other in others {
            #expect(!MappingOracle.sameJSON(one, try JSONSerialization.jsonObject(with: Data(other.utf8))), "\(other)")
        }
    }
}
