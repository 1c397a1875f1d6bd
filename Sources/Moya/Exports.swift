// `import Moya` makes Foundation visible, as it does for Moya built as a framework on Apple
// platforms: Moya code uses `URL`, `Data`, `JSONDecoder` and `DispatchQueue` with no other
// import. On Linux, `URLRequest`, `HTTPURLResponse`, `URLSessionConfiguration`, `URLCredential`
// and `URLError` live in FoundationNetworking, which Moya's public API uses, so it is exported
// too.
@_exported import Foundation

#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
