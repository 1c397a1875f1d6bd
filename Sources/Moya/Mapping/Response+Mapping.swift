import Foundation

extension Response {
    /// Maps the body to a JSON object with `JSONSerialization`.
    ///
    /// Top-level fragments (a string, number, boolean or `null`) are accepted.
    ///
    /// - Parameter failsOnEmptyData: When `false`, an empty body maps to `NSNull()` instead of
    ///   throwing.
    /// - Returns: The parsed object: `[String: Any]`, `[Any]`, `String`, `NSNumber`/`Bool` or
    ///   `NSNull`.
    /// - Throws: `MoyaError.jsonMapping(self)` when the body is not valid JSON.
    public func mapJSON(failsOnEmptyData: Bool = true) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: self.data, options: .fragmentsAllowed)
        } catch {
            if self.data.isEmpty && !failsOnEmptyData {
                return NSNull()
            }
            throw self.mappingError(self.data.isEmpty ? .emptyBody : .invalidJSON(Self.parserMessage(error)), as: .json)
        }
    }

    /// Maps the body, or the string at a key path in its JSON, to a `String`.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary, such as
    ///   `"user.name"`, or `nil` to decode the whole body as UTF-8.
    /// - Returns: The string.
    /// - Throws: `MoyaError.jsonMapping(self)` when a key path is given and the body is not
    ///   valid JSON; `MoyaError.stringMapping(self)` when the body is not UTF-8, the top level
    ///   is not a dictionary, or the value at the key path is missing or not a string.
    public func mapString(atKeyPath keyPath: String? = nil) throws -> String {
        guard let keyPath else {
            guard let string = String(data: self.data, encoding: .utf8) else {
                throw self.mappingError(.notUTF8, as: .string)
            }
            return string
        }
        switch self.scan(for: JSONKeyPath(keyPath)) {
        case .found(let range, .string):
            return self.data.withUnsafeBytes { body in
                JSONKeyPathScanner.decodeString(UnsafeRawBufferPointer(rebasing: body[(range.lowerBound + 1)..<(range.upperBound - 1)]))
            }
        case .notFound:
            throw self.mappingError(.keyPathNotFound(keyPath: keyPath), as: .string)
        case .notADictionary:
            throw self.mappingError(.notADictionary(keyPath: keyPath), as: .string)
        case .found, .unsupported:
            return try self.mapStringUsingJSONSerialization(atKeyPath: keyPath)
        }
    }

    /// ``mapString(atKeyPath:)`` with a key path, the way it was done before
    /// ``JSONKeyPathScanner``: the whole body parsed with `JSONSerialization` and the key path
    /// walked through the objects it gives. It is what the scanner must agree with, and what
    /// handles the bodies the scanner leaves alone.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary.
    /// - Returns: The string at the key path.
    /// - Throws: As ``mapString(atKeyPath:)``.
    func mapStringUsingJSONSerialization(atKeyPath keyPath: String) throws -> String {
        guard let dictionary = try self.mapJSON() as? [String: Any] else {
            throw self.mappingError(.notADictionary(keyPath: keyPath), as: .string)
        }
        guard let value = JSONKeyPath(keyPath).value(in: dictionary) else {
            throw self.mappingError(.keyPathNotFound(keyPath: keyPath), as: .string)
        }
        guard let string = value as? String else {
            throw self.mappingError(.notAString(keyPath: keyPath, found: Self.kindOfJSONValue(value)), as: .string)
        }
        return string
    }

    /// Decodes the body, or the value at a key path in its JSON, as `D`.
    ///
    /// With a key path, the value found there is decoded: a dictionary or array directly, and
    /// a scalar (string, number, boolean, `null`) through a wrapper, so that `atKeyPath:
    /// "count"` can be decoded as `Int`. Numbers and booleans stay distinct: `1` does not
    /// decode as `Bool`, nor `"123"` as `Int`.
    ///
    /// When the key path leads nowhere (the body is not a JSON dictionary or the key is
    /// missing), `failsOnEmptyData == true` throws `MoyaError.jsonMapping`, and
    /// `failsOnEmptyData == false` falls back to decoding the whole body.
    ///
    /// When the data to decode is empty and `failsOnEmptyData == false`, `D` is first decoded
    /// from `{}` and then from `[{}]`, so a type whose properties are all optional (or an
    /// array of such) maps to an empty value.
    ///
    /// - Parameters:
    ///   - type:              The type to decode.
    ///   - keyPath:           A dotted key path into the top-level JSON dictionary, or `nil`.
    ///   - decoder:           The decoder to use.
    ///   - failsOnEmptyData:  Whether empty data or a missing key path is an error.
    /// - Returns: The decoded value.
    /// - Throws: `MoyaError.jsonMapping(self)` when the JSON cannot be parsed or the key path
    ///   is missing (see above); `MoyaError.objectMapping(error, self)` with the
    ///   `DecodingError` when decoding fails. With a key path, the `DecodingError`'s coding path
    ///   starts at the top of the body, with the key path's components, so it names the
    ///   failing value in full (`user.address.zip`).
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) throws -> D {
        guard let keyPath else {
            return try self.decodeBody(type, using: decoder, failsOnEmptyData: failsOnEmptyData)
        }
        // The body is read once to find the value's bytes, which the decoder then reads. When
        // the scanner leaves the body alone, or decoding the value fails, the JSONSerialization
        // path takes over and gives the answer and the error it always gave.
        switch self.scan(for: JSONKeyPath(keyPath)) {
        case .found(let range, let kind):
            if case .success(let value) = self.decodeValue(type, at: range, kind: kind, using: decoder) {
                return value
            }
        case .notFound where failsOnEmptyData:
            throw self.mappingError(.keyPathNotFound(keyPath: keyPath), as: .json)
        case .notADictionary where failsOnEmptyData:
            throw self.mappingError(.notADictionary(keyPath: keyPath), as: .json)
        case .notFound, .notADictionary:
            return try self.decodeBody(type, using: decoder, failsOnEmptyData: failsOnEmptyData)
        case .unsupported:
            break
        }
        return try self.mapUsingJSONSerialization(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData)
    }

    /// ``map(_:atKeyPath:using:failsOnEmptyData:)`` with a key path, the way it was done before
    /// ``JSONKeyPathScanner``: the whole body parsed with `JSONSerialization`, the key path
    /// walked through the objects it gives, and the value found written back to JSON for the
    /// decoder. It is what the scanner must agree with, and what handles the bodies the scanner
    /// leaves alone and the values the decoder refuses (so that errors stay the same).
    ///
    /// - Parameters:
    ///   - type:              The type to decode.
    ///   - keyPath:           A dotted key path into the top-level JSON dictionary.
    ///   - decoder:           The decoder to use.
    ///   - failsOnEmptyData:  Whether empty data or a missing key path is an error.
    /// - Returns: The decoded value.
    /// - Throws: As ``map(_:atKeyPath:using:failsOnEmptyData:)``.
    func mapUsingJSONSerialization<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String,
        using decoder: JSONDecoder,
        failsOnEmptyData: Bool
    ) throws -> D {
        let json = try self.mapJSON(failsOnEmptyData: failsOnEmptyData)
        if let dictionary = json as? [String: Any],
            let value = JSONKeyPath(keyPath).value(in: dictionary)
        {
            if JSONSerialization.isValidJSONObject(value) {
                let valueData = try self.serialize(value)
                do {
                    return try decoder.decode(D.self, from: valueData)
                } catch let error as DecodingError {
                    throw MoyaError.objectMapping(error.prefixingCodingPath(with: keyPath), self)
                } catch {
                    throw MoyaError.objectMapping(error, self)
                }
            } else {
                return try self.decodeScalar(type, from: value, atKeyPath: keyPath, using: decoder)
            }
        } else if failsOnEmptyData {
            let failure: MappingFailure = json is [String: Any] ? .keyPathNotFound(keyPath: keyPath) : .notADictionary(keyPath: keyPath)
            throw self.mappingError(failure, as: .json)
        }
        return try self.decodeBody(type, using: decoder, failsOnEmptyData: failsOnEmptyData)
    }

    /// Finds the value at `keyPath` with ``JSONKeyPathScanner``.
    private func scan(for keyPath: JSONKeyPath) -> JSONKeyPathScanner.Outcome {
        self.data.withUnsafeBytes { body in
            JSONKeyPathScanner.lookUp(keyPath, in: body)
        }
    }

    /// Decodes the value the scanner found at `range` (offsets into the body): an object or an
    /// array directly from the body's bytes, a scalar through the `{"value": …}` wrapper that the
    /// JSONSerialization path uses (so that a key decoding strategy sees the same key).
    ///
    /// - Returns: The value, or the error, which the caller drops for the JSONSerialization
    ///   path's.
    private func decodeValue<D: Decodable>(_ type: D.Type, at range: Range<Int>, kind: JSONKeyPathScanner.ValueKind, using decoder: JSONDecoder) -> Result<
        D, any Error
    > {
        let bytes = self.data[(self.data.startIndex + range.lowerBound)..<(self.data.startIndex + range.upperBound)]
        switch kind {
        case .object, .array:
            return Result { try decoder.decode(D.self, from: bytes) }
        case .string, .number, .boolean, .null:
            var wrapped = Data(capacity: bytes.count + 10)
            wrapped.append(contentsOf: #"{"value":"#.utf8)
            wrapped.append(bytes)
            wrapped.append(UInt8(ascii: "}"))
            return Result { try decoder.decode(ScalarWrapper<D>.self, from: wrapped).value }
        }
    }

    /// Decodes the whole body as `D`; with `failsOnEmptyData == false`, an empty body is first
    /// decoded as `{}` and then as `[{}]`.
    private func decodeBody<D: Decodable>(_ type: D.Type, using decoder: JSONDecoder, failsOnEmptyData: Bool) throws -> D {
        let jsonData = self.data
        if jsonData.isEmpty && !failsOnEmptyData {
            if let value = try? decoder.decode(D.self, from: Data("{}".utf8)) {
                return value
            }
            if let value = try? decoder.decode(D.self, from: Data("[{}]".utf8)) {
                return value
            }
        }
        do {
            return try decoder.decode(D.self, from: jsonData)
        } catch {
            throw MoyaError.objectMapping(error, self)
        }
    }

    /// Decodes a scalar JSON value (string, number, boolean, `null`) by wrapping it as
    /// `{"value": scalar}`; a `DecodingError`'s coding path names the key path, not the wrapper.
    private func decodeScalar<D: Decodable>(_ type: D.Type, from value: Any, atKeyPath keyPath: String, using decoder: JSONDecoder) throws -> D {
        let wrapped = try self.serialize(["value": value])
        do {
            return try decoder.decode(ScalarWrapper<D>.self, from: wrapped).value
        } catch let error as DecodingError {
            throw MoyaError.objectMapping(error.prefixingCodingPath(with: keyPath, replacingFirst: 1), self)
        } catch {
            throw MoyaError.objectMapping(error, self)
        }
    }

    /// Records why mapping failed (see ``MappingFailure``) and returns the error to throw.
    private func mappingError(_ failure: MappingFailure, as kind: MappingFailure.Kind) -> MoyaError {
        MappingFailure.record(failure, as: kind, for: self)
        switch kind {
        case .json: return .jsonMapping(self)
        case .string: return .stringMapping(self)
        }
    }

    /// The JSON parser's explanation of `error`, such as "Invalid value around line 1, column 0."
    private static func parserMessage(_ error: any Error) -> String {
        let nsError = error as NSError
        if let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String, !detail.isEmpty {
            return detail
        }
        return error.localizedDescription
    }

    /// What a JSON value is, for messages: "a number", "an array", ...
    private static func kindOfJSONValue(_ value: Any) -> String {
        switch value {
        case is NSNull: return "null"
        case is [String: Any]: return "a dictionary"
        case is [Any]: return "an array"
        case is NSNumber: return "a number or boolean"
        case is Bool: return "a boolean"
        case is Int, is Double: return "a number"
        default: return "a \(type(of: value))"
        }
    }

    /// Serializes a JSON object, mapping any failure to `MoyaError.jsonMapping(self)`.
    private func serialize(_ object: Any) throws -> Data {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw MoyaError.jsonMapping(self)
        }
        do {
            return try JSONSerialization.data(withJSONObject: object)
        } catch {
            throw MoyaError.jsonMapping(self)
        }
    }
}

/// The `{"value": …}` wrapper used to decode a scalar found at a key path.
private struct ScalarWrapper<Value: Decodable>: Decodable {
    /// The wrapped scalar.
    let value: Value
}
