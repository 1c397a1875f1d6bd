import Foundation
import Moya

/// Key-path mapping of one large body (`--only mapping`): `Response.map(_:atKeyPath:)` and
/// `mapString(atKeyPath:)` against `JSONDecoder().decode` of the whole document, and against
/// the algorithm key-path mapping used before (the whole body parsed with `JSONSerialization`,
/// the value at the key path written back to JSON and decoded), written here with public API.
///
/// The body is about 430 KB: an object with a small `"meta"` object and, under `"data"`, an
/// array of 5,000 objects of five fields each. The operations take short turns of about 20 ms
/// each (so that the machine's drift hits them alike), five turns per round, each turn starting
/// with the next operation. An operation's time is the median over the turns of its time per
/// call, and its ratio the median over the turns of its time divided by `JSONDecoder`'s in the
/// same turn, with the middle half of those ratios as their spread.
enum MappingBenchmark {
    /// One object of the array under `"data"`.
    struct Item: Decodable {
        let id: Int
        let name: String
        let email: String
        let active: Bool
        let score: Double
    }

    /// The `"meta"` object.
    struct Meta: Decodable {
        let page: Int
        let total: Int
        let cursor: String
    }

    /// The whole document, for `JSONDecoder`.
    struct Document: Decodable {
        let meta: Meta
        let data: [Item]
    }

    /// One timed operation: its name and a call that returns something to keep.
    struct Operation {
        /// What it does, as printed.
        let name: String
        /// One call; the result is kept so that the work is not optimised away.
        let run: () throws -> Int
    }

    /// The body: `{"meta":{…},"data":[5,000 objects]}`, `"meta"` last so that every lookup reads
    /// the whole body.
    static func makeBody() -> Data {
        var text = #"{"data":["#
        for index in 0..<5_000 {
            if index > 0 { text += "," }
            text += #"{"id":\#(100_000 + index),"name":"User \#(index)","email":"u\#(index)@mail.com","#
            text += #""active":\#(index % 3 == 0),"score":\#(Double(index % 1_000) / 8)}"#
        }
        text += #"],"meta":{"page":1,"total":5000,"cursor":"c3VyZWx5IG5vdCBhIHJlYWwgY3Vyc29y"}}"#
        return Data(text.utf8)
    }

    /// Runs the benchmark and prints its table.
    static func run(rounds: Int) throws {
        let body = makeBody()
        let response = Response(statusCode: 200, data: body)
        // The algorithm used before, for a one-component key path: what `map(_:atKeyPath:)` did,
        // step by step (it checked that the value can be written as JSON twice).
        func previousAlgorithm<D: Decodable>(_ type: D.Type, at key: String) throws -> D {
            let json = try response.mapJSON()
            guard let value = (json as? [String: Any])?[key], JSONSerialization.isValidJSONObject(value),
                JSONSerialization.isValidJSONObject(value)
            else {
                throw MoyaError.jsonMapping(response)
            }
            let valueData = try JSONSerialization.data(withJSONObject: value)
            return try JSONDecoder().decode(type, from: valueData)
        }
        let operations = [
            Operation(name: "JSONDecoder().decode, whole document") { try JSONDecoder().decode(Document.self, from: body).data.count },
            Operation(name: "map([Item].self, atKeyPath: \"data\")") { try response.map([Item].self, atKeyPath: "data").count },
            Operation(name: "map(Meta.self, atKeyPath: \"meta\")") { try response.map(Meta.self, atKeyPath: "meta").total },
            Operation(name: "map(Int.self, atKeyPath: \"meta.total\")") { try response.map(Int.self, atKeyPath: "meta.total") },
            Operation(name: "mapString(atKeyPath: \"meta.cursor\")") { try response.mapString(atKeyPath: "meta.cursor").utf8.count },
            Operation(name: "mapJSON()") { (try response.mapJSON() as? [String: Any])?.count ?? 0 },
            Operation(name: "before: map([Item].self, atKeyPath: \"data\")") { try previousAlgorithm([Item].self, at: "data").count },
        ]

        // About 20 ms of calls per operation and turn (at least one), from a first timed call.
        let iterations = try operations.map { operation in
            _ = try operation.run()
            let once = try time(1, operation)
            return max(1, Int(0.02 / once))
        }
        var times = Array(repeating: [Double](), count: operations.count)
        for turn in 0..<(rounds * 5) {
            for step in operations.indices {
                let index = (turn + step) % operations.count
                times[index].append(try time(iterations[index], operations[index]))
            }
        }

        print("")
        print("Key-path mapping of a \(format(Double(body.count) / 1_000)) KB body (5,000 objects under \"data\"), \(rounds * 5) turns")
        print(column("operation", 46) + column("ms/call", 10) + column("vs JSONDecoder", 16) + "middle half")
        for (index, operation) in operations.enumerated() {
            let ratios = zip(times[index], times[0]).map { $0 / $1 }
            print(
                column(operation.name, 46) + column(format(Statistics.median(times[index]) * 1_000, 3), 10)
                    + column(format(Statistics.median(ratios), 3) + "x", 16)
                    + format(Statistics.percentile(ratios, 0.25), 3) + "-" + format(Statistics.percentile(ratios, 0.75), 3))
        }
    }

    /// Seconds per call of `operation`, over `iterations` calls.
    private static func time(_ iterations: Int, _ operation: Operation) throws -> Double {
        let clock = ContinuousClock()
        var kept = 0
        let start = clock.now
        for _ in 0..<iterations {
            kept &+= try operation.run()
        }
        let elapsed = clock.now - start
        precondition(kept != Int.min, "keeps the results alive")
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(iterations)
    }
}
