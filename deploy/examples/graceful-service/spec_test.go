package main

import (
	"encoding/json"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// The example operation spec parses as sharetree op submit reads it, asks
// for graceful preemption with SIGINT, and runs the service.
func TestCliqueSpecParses(t *testing.T) {
	data, err := os.ReadFile("clique.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec := &pb.OperationSpec{}
	if err := protojson.Unmarshal(js, spec); err != nil {
		t.Fatal(err)
	}
	if spec.GetPreemptionMode() != pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL || spec.GetInterruptionSignal() != "SIGINT" {
		t.Errorf("mode %s, signal %q", spec.GetPreemptionMode(), spec.GetInterruptionSignal())
	}
	argv := spec.GetTasks()[0].GetCommand().GetArgv()
	if len(argv) == 0 || argv[0] != "graceful-service" {
		t.Errorf("argv %q", argv)
	}
}
