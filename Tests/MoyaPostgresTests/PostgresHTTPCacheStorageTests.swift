import MoyaPostgres
import Testing
