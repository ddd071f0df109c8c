module github.com/sharetree/sharetree

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
)
