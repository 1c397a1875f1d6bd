import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Random inputs for the code that reads what users and servers hand it. Each test runs a
/// fixed number of cases from a fixed seed, so CI runs are short and a failure can be replayed;
/// set `MOYA_FUZZ_ITERATIONS` for a longer run and `MOYA_FUZZ_SEED` for another seed.
struct Fuzz {
    var generator: SplitMix64

    static var iterations: Int {
        ProcessInfo.processInfo.environment["MOYA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 1500
    }

    init(_ salt: UInt64) {
        let seed = ProcessInfo.processInfo.environment["MOYA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED
        generator = SplitMix64(seed: seed ^ salt)
    }

    /// Pieces that tend to break parsers and encoders.
    static let pieces = [
        "/", "//", ".", "..", "/../", "./", "?", "#", "&", "=", "%", "%2", "%zz", "%2E%2E", "%00", "+", " ", "\t",
        "\r\n", "\n", "\r", "\"", "'", "\\", ":", "@", "[", "]", "{", "}", ";", ",", "\u{0}", "\u{7F}", "é", "日本",
        "🚀", "\u{202E}", "\u{FEFF}", "a", "key", "value", "data", "0", "-1", "1e309", "true", "null", "http://", "https://x",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &generator)
    }

    mutating func bool() -> Bool {
        Bool.random(using: &generator)
    }

    /// A string of pieces and arbitrary scalars.
    mutating func string(maxPieces: Int = 8) -> String {
        var text = ""
        for _ in 0..<int(0...maxPieces) {
            if int(0...4) == 0 {
                let value = UInt32(int(0...0x10FFFF))
                text.unicodeScalars.append(Unicode.Scalar(value) ?? "x")
            } else {
                text += Self.pieces.randomElement(using: &generator)!
            }
        }
        return text
    }

    /// A parameter value: scalars, arrays and dictionaries, nested a little.
    mutating func value(depth: Int = 0) -> Any {
        switch int(0...(depth > 2 ? 4 : 6)) {
        case 0: return string()
        case 1: return int(Int.min / 2...Int.max / 2)
        case 2: return Double(int(-1_000_000...1_000_000)) / 7
        case 3: return bool()
        case 4: return NSNull()
        case 5: return (0..<int(0...3)).map { _ in value(depth: depth + 1) }
        default: return parameters(depth: depth + 1)
        }
    }

    mutating func parameters(depth: Int = 0) -> [String: Any] {
        var result: [String: Any] = [:]
        for _ in 0..<int(0...4) {
            result[string(maxPieces: 3)] = value(depth: depth)
        }
        return result
    }

    /// A JSON-compatible value for documents that key paths walk.
    mutating func jsonValue(depth: Int = 0) -> Any {
        switch int(0...(depth > 3 ? 3 : 5)) {
        case 0: return string(maxPieces: 2)
        case 1: return int(-1000...1000)
        case 2: return bool()
        case 3: return NSNull()
        case 4: return (0..<int(0...3)).map { _ in jsonValue(depth: depth + 1) }
        default:
            var object: [String: Any] = [:]
            for _ in 0..<int(0...4) {
                object[["data", "user", "items", "a", "b", "é", string(maxPieces: 1)].randomElement(using: &generator)!] = jsonValue(depth: depth + 1)
            }
            return object
        }
    }
}

/// A target built from fuzzed parts.
private struct FuzzTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: Moya.Method
    let task: Task
    let headers: [String: String]?
}

@Suite("Fuzzing what parses untrusted input")
struct FuzzTests {
    @Test("Endpoints from arbitrary paths and parameters build a request or fail with a MoyaError")
    func endpoints() async {
        var fuzz = Fuzz(1)
        let bases = ["https://api.example.com", "https://api.example.com/v1/", "http://127.0.0.1:8080/a%20b", "https://x.example/?q=1", "https://x.example/#f"]
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 50, iteration)
            let encoding: ParameterEncoding = [
                URLEncoding.default, URLEncoding.queryString, URLEncoding.httpBody, JSONEncoding.default, JSONEncoding.prettyPrinted,
            ].randomElement(using: &fuzz.generator)!
            let target = FuzzTarget(
                baseURL: URL(string: bases.randomElement(using: &fuzz.generator)!)!,
                path: fuzz.string(),
                method: fuzz.bool() ? .get : .post,
                task: fuzz.bool()
                    ? .requestParameters(parameters: fuzz.parameters(), encoding: encoding)
                    : .requestCompositeParameters(bodyParameters: fuzz.parameters(), bodyEncoding: JSONEncoding.default, urlParameters: fuzz.parameters()),
                headers: [fuzz.string(maxPieces: 2): fuzz.string(maxPieces: 3)]
            )
            let endpoint = MoyaProvider<FuzzTarget>.defaultEndpointMapping(for: target)
            do {
                let request = try endpoint.urlRequest()
                #expect(request.url != nil)
            } catch {
                switch error as? MoyaError {
                case .requestMapping?, .parameterEncoding?, .encodableMapping?: break
                default: Issue.record("unexpected error \(error) for path \(target.path.debugDescription)")
                }
            }
            _ = endpoint.hashValue
        }
    }

    @Test("URL-encoded parameters are written with only unreserved and escaped characters")
    func urlEncoding() async throws {
        var fuzz = Fuzz(2)
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&[]+!$'()*,;:@/?".utf8)
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 50, iteration)
            var request = URLRequest(url: URL(string: "https://api.example.com/search")!)
            request.httpMethod = "POST"
            let encoded = try URLEncoding.httpBody.encode(request, with: fuzz.parameters())
            let body = encoded.httpBody ?? Data()
            #expect(body.allSatisfy { allowed.contains($0) }, "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test("Multipart names and file names cannot add header lines or parts")
    func multipart() async throws {
        var fuzz = Fuzz(3)
        for iteration in 0..<Fuzz.iterations / 3 {
            await yieldNow(every: 50, iteration)
            let form = RequestMultipartFormData(boundary: "fuzz.boundary")
            let count = fuzz.int(1...4)
            for _ in 0..<count {
                let name = fuzz.string(maxPieces: 4)
                let fileName: String? = fuzz.bool() ? fuzz.string(maxPieces: 4) : nil
                let mimeType: String? = fuzz.bool() ? fuzz.string(maxPieces: 2) : nil
                form.append(Data(fuzz.string(maxPieces: 3).utf8), withName: name, fileName: fileName, mimeType: mimeType)
            }
            let body = String(decoding: try form.encode(), as: UTF8.self)
            let parts = body.components(separatedBy: "--fuzz.boundary\r\n").dropFirst()
            #expect(parts.count == count)
            for part in parts {
                let head = part.components(separatedBy: "\r\n\r\n").first ?? ""
                let lines = head.components(separatedBy: "\r\n")
                #expect(lines.count <= 2, "\(head.debugDescription)")
                // Compared as bytes: a name may start with a combining scalar, which Swift joins to
                // the quote before it into one Character.
                #expect(lines.first?.utf8.starts(with: "Content-Disposition: form-data; name=\"".utf8) == true, "\(head.debugDescription)")
                #expect(lines.dropFirst().allSatisfy { $0.utf8.starts(with: "Content-Type: ".utf8) }, "\(head.debugDescription)")
                #expect(!head.utf8.contains(0x0A) || lines.count == 2)
            }
        }
    }

    @Test("Key-path mapping of arbitrary JSON returns a value or throws a MoyaError")
    func keyPaths() async throws {
        var fuzz = Fuzz(4)
        struct AnyValue: Decodable {}
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 50, iteration)
            let document = fuzz.jsonValue()
            let data: Data
            if fuzz.int(0...9) == 0 {
                data = Data(fuzz.string().utf8)
            } else {
                data = (try? JSONSerialization.data(withJSONObject: document, options: [.fragmentsAllowed])) ?? Data()
            }
            let response = Response(statusCode: 200, data: data)
            let keyPath = (0..<fuzz.int(0...3)).map { _ in
                ["data", "user", "items", "a", "b", "é", "", fuzz.string(maxPieces: 1)].randomElement(using: &fuzz.generator)!
            }.joined(separator: ".")
            do { _ = try response.mapString(atKeyPath: keyPath) } catch {}
            do { _ = try response.map(String.self, atKeyPath: keyPath) } catch {}
            do { _ = try response.map([Int].self, atKeyPath: keyPath, failsOnEmptyData: fuzz.bool()) } catch {}
            do { _ = try response.map(Int.self, atKeyPath: keyPath) } catch {}
            do { _ = try response.mapJSON(failsOnEmptyData: fuzz.bool()) } catch {}
            // Descriptions of mapping errors never crash either.
            do { _ = try response.map(AnyValue.self, atKeyPath: keyPath) } catch { _ = "\(error)" }
        }
    }

    @Test("Header lists take arbitrary names and values")
    func headers() async {
        var fuzz = Fuzz(5)
        for iteration in 0..<Fuzz.iterations {
            await yieldNow(every: 50, iteration)
            var headers = HTTPHeaders()
            for _ in 0..<fuzz.int(0...6) {
                headers[fuzz.string(maxPieces: 2)] = fuzz.bool() ? fuzz.string(maxPieces: 3) : nil
            }
            let names = headers.map { $0.name.lowercased() }
            #expect(Set(names).count == names.count)
            _ = headers.dictionary
            _ = headers.sorted().description
        }
    }
}
